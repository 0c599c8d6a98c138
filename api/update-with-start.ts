import { createHash } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, type SearchAttributePair, type TypedSearchAttributes } from '@temporalio/common';
import { ulid } from 'ulid';
import { causeChain, DrydockError, isErrorCode, type ErrorCode } from '../domain/errors';
import { newId } from '../domain/ids';
import type { BeginRequest, OperationBegun, OperationWorkflow } from '../workflows/definitions';
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

/** One update-with-start: which workflow, with what, and the begin request it carries. */
export interface UpdateWithStart<I extends object, R extends BeginRequest, A extends OperationBegun> {
  workflow: OperationWorkflow<I, R, A>;
  workflowId: string;
  input: I;
  searchAttributes: SearchAttributePair[];
  summary: string;
  request: R;
}

/**
 * Update-with-start of the workflow's `begin` update (docs/architecture.md, rule 4): conflict
 * policy USE_EXISTING, update id `beginUpdateId`, the operation id minted here.
 * A refused begin comes back as the DrydockError whose code the workflow named; any other failure
 * of the Temporal client as UNAVAILABLE (its cause kept for the server's log).
 */
export async function updateWithStart<I extends object, R extends BeginRequest, A extends OperationBegun>(
  deps: AppDeps,
  start: UpdateWithStart<I, R, A>,
): Promise<A> {
  const { workflow } = start;
  const deadline = Date.now() + (deps.beginTimeoutMs ?? 15_000);
  const updateId = beginUpdateId(start.request);
  const request: R = { ...start.request, operationId: newId('op') };
  for (let attempt = 1; ; attempt++) {
    // A WithStartWorkflowOperation is single-use: a retry needs a new one.
    const startWorkflowOperation = new WithStartWorkflowOperation(workflow.type ?? workflow.kind, {
      workflowId: start.workflowId,
      taskQueue: deps.taskQueue,
      args: [start.input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: start.searchAttributes as unknown as TypedSearchAttributes,
      staticSummary: start.summary,
    });
    try {
      return await deps.temporal.withDeadline(deadline, () =>
        deps.temporal.workflow.executeUpdateWithStart(workflow.begin, {
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
  const refusal = causeChain(error.cause).find(
    (cause): cause is ApplicationFailure & { type: ErrorCode } =>
      cause instanceof ApplicationFailure && isErrorCode(cause.type),
  );
  if (!refusal) return null;
  const [details] = (refusal.details ?? []) as [Record<string, unknown> | undefined];
  return new DrydockError(refusal.type, refusal.message, details ?? {});
}
