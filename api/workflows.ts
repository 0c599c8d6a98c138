import { createHash } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure, type TypedSearchAttributes, type SearchAttributePair } from '@temporalio/common';
import { ulid } from 'ulid';
import { DrydockError, isErrorCode } from '../domain/errors';
import { newId } from '../domain/ids';
import { beginUpdate, type BeginRequest, type BeginResult } from '../workflows/definitions';
import type { AppDeps } from './env';
import { classifyTemporalError, grpcCode } from './temporal-errors';

/** SHA-256 over a request's canonical JSON: what an Idempotency-Key is bound to. */
export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The begin's update id, which Temporal deduplicates within a run: the same caller, key and request
 * share one; another caller's same key, or the same key with another body, never does (so a retry
 * sees its own answer and a conflicting one reaches the begin, which refuses it). No key: a fresh id.
 */
function beginUpdateId(request: BeginRequest): string {
  if (!request.idempotencyKey) return ulid();
  return createHash('sha256')
    .update(canonicalJson([request.idempotencyScope, request.idempotencyKey, request.requestHash]))
    .digest('hex');
}

export interface StartOperation<Input> {
  workflowType: string;
  workflowId: string;
  input: Input;
  searchAttributes: SearchAttributePair[];
  summary: string;
  request: BeginRequest;
}

/**
 * Starts (or joins) a lifecycle workflow the one way docs/architecture.md describes: update-with-start
 * of its `begin` update, conflict policy USE_EXISTING, update id = `beginUpdateId`.
 * A refused begin comes back as the DrydockError whose code the workflow named; any other failure
 * of the Temporal client as UNAVAILABLE (its cause kept for the server's log).
 */
export async function startOperation<Input>(
  deps: AppDeps,
  start: StartOperation<Input>,
): Promise<BeginResult> {
  const deadline = Date.now() + (deps.beginTimeoutMs ?? 15_000);
  const updateId = beginUpdateId(start.request);
  const request: BeginRequest = { ...start.request, operationId: newId('op') };
  for (let attempt = 1; ; attempt++) {
    // A WithStartWorkflowOperation is single-use: a retry needs a new one.
    const startWorkflowOperation = new WithStartWorkflowOperation(start.workflowType, {
      workflowId: start.workflowId,
      taskQueue: deps.taskQueue,
      args: [start.input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: start.searchAttributes as unknown as TypedSearchAttributes,
      staticSummary: start.summary,
    });
    try {
      return await deps.temporal.withDeadline(deadline, () =>
        deps.temporal.workflow.executeUpdateWithStart(beginUpdate, {
          args: [request],
          updateId,
          startWorkflowOperation,
        }),
      );
    } catch (error) {
      // The server refuses the pair while the previous run of this id is closing: try again.
      if (grpcCode(error) === FAILED_PRECONDITION && attempt < START_ATTEMPTS && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        continue;
      }
      throw refusalOf(error) ?? classifyTemporalError(error) ?? error;
    }
  }
}

const START_ATTEMPTS = 5;
const FAILED_PRECONDITION = 9;

function refusalOf(error: unknown): DrydockError | null {
  if (!(error instanceof WorkflowUpdateFailedError)) return null;
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) {
      const [details] = (cause.details ?? []) as [Record<string, unknown> | undefined];
      return new DrydockError(cause.type, cause.message, details ?? {});
    }
  }
  return null;
}

/** How long a route waits for a signal to be taken: the change is committed whether or not it is. */
const SIGNAL_TIMEOUT_MS = 2_000;

/** Sends a signal to a workflow if it runs; a missing workflow is fine (its timer catches up). */
export async function signalIfRunning(
  client: Client,
  workflowId: string,
  signal: string,
  args: unknown[] = [],
): Promise<void> {
  try {
    await client.withDeadline(Date.now() + SIGNAL_TIMEOUT_MS, () =>
      client.workflow.getHandle(workflowId).signal(signal, ...args),
    );
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return;
    // The change is committed; the workflow's periodic check will see it even without the signal.
    console.warn(`signal ${signal} to ${workflowId} failed: ${(error as Error).message}`);
  }
}
