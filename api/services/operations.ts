import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import { DrydockError } from '../../domain/errors';
import { isFinished, type CancellationRequest } from '../../domain/operation';
import { actorOf, type Principal } from '../../domain/principal';
import { endCancelledOperation, recordCancellation } from '../../db/cancellation';
import { findOperation, getVisibleOperation, type OperationRow } from '../../db/queries/operations';
import { wakeAfterCleanUp } from '../../activities/signals';
import type { AppDeps } from '../env';
import { classifyTemporalError } from '../temporal-errors';

type Deps = Pick<AppDeps, 'db' | 'temporal' | 'log'>;

/** How long DELETE waits for the workflow's clean-up before answering the operation still running. */
const CLEAN_UP_WAIT_MS = 10_000;
const CLEAN_UP_POLL_MS = 100;
/** How long one call to Temporal may take. */
const TEMPORAL_TIMEOUT_MS = 5_000;

export interface CancelRequest {
  reason?: string;
  children?: 'finish' | 'cancel';
}

/**
 * Cancels a running operation (DELETE /v1/operations/{id}): records who asked (the first request
 * wins), cancels its workflow, and waits a bounded time for the workflow's clean-up
 * (workflows/cancellation.ts). A workflow already closed cannot clean up: the same clean-up runs
 * here, in the transaction that records the request. `cleanedUp` is false when the wait ran out
 * (the workflow was asked and ends it later).
 */
export async function cancelOperation(
  deps: Deps,
  id: string,
  principal: Principal,
  request: CancelRequest,
): Promise<{ operation: OperationRow; cleanedUp: boolean }> {
  const op = await getVisibleOperation(deps.db, id, principal);
  if (request.children && op.kind !== 'pool-drain') {
    throw new DrydockError('INVALID_INPUT', `children applies to a pool drain only, not a ${op.kind}`, {
      kind: op.kind,
    });
  }
  if (isFinished(op.status)) return { operation: answered(op), cleanedUp: true };
  if (op.kind === 'decommission') {
    throw new DrydockError(
      'INVALID_STATE',
      'a decommission cannot be cancelled once admitted: there is no undo',
      {
        status: op.status,
        kind: op.kind,
      },
    );
  }
  // Asked first, so that Temporal being away changes nothing: the answer is 503 and no record.
  const running = await temporalCall(deps, async () => {
    try {
      const described = await deps.temporal.workflow.getHandle(op.workflowId).describe();
      return described.status.name === 'RUNNING';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  });
  const ask: CancellationRequest = {
    by: actorOf(principal),
    reason: request.reason ?? null,
    at: new Date().toISOString(),
    ...(op.kind === 'pool-drain' ? { children: request.children ?? 'finish' } : {}),
  };
  const cleanUpHere = async () => {
    const ended = await deps.db.transaction(async (tx) => {
      await recordCancellation(tx, op.id, ask);
      return endCancelledOperation(tx, op.id, { actor: ask.by });
    });
    await wakeAfterCleanUp(deps, ended);
    return { operation: answered(ended ?? op), cleanedUp: true };
  };
  if (!running) return cleanUpHere();
  await deps.db.transaction((tx) => recordCancellation(tx, op.id, ask));
  // Recorded, then asked: if Temporal went away in between, the record stays (a retry of DELETE
  // completes it, with the first request's actor) and the answer is 503.
  const asked = await temporalCall(deps, async () => {
    try {
      await deps.temporal.workflow.getHandle(op.workflowId).cancel();
      return true;
    } catch (error) {
      // It closed since it was described.
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  });
  if (!asked) return cleanUpHere();
  const deadline = Date.now() + CLEAN_UP_WAIT_MS;
  for (;;) {
    const now = (await findOperation(deps.db, op.id))!;
    if (isFinished(now.status)) return { operation: answered(now), cleanedUp: true };
    if (Date.now() >= deadline) return { operation: now, cleanedUp: false };
    await sleep(CLEAN_UP_POLL_MS);
  }
}

/** A finished operation is the answer when it was cancelled; any other end is not the caller's to change. */
function answered(op: OperationRow): OperationRow {
  if (op.status === 'cancelled') return op;
  throw new DrydockError('INVALID_STATE', `operation ${op.id} already ${op.status}`, {
    status: op.status,
  });
}

async function temporalCall<T>(deps: Deps, call: () => Promise<T>): Promise<T> {
  try {
    return await deps.temporal.withDeadline(Date.now() + TEMPORAL_TIMEOUT_MS, call);
  } catch (error) {
    throw classifyTemporalError(error) ?? error;
  }
}
