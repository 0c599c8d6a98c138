import { eq, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import type { PoolMaintenanceWaitingFor } from '../../domain/maintenance-progress';
import { isFinished, isPoolKind, type CancellationRequest } from '../../domain/operation';
import { actorOf, type Principal } from '../../domain/principal';
import { decommissionCancellable, endCancelledOperation, recordCancellation } from '../../db/cancellation';
import { appendEvent } from '../../db/events';
import { lockNode } from '../../db/nodes';
import { enqueueWake } from '../../db/outbox';
import { operations } from '../../db/schema';
import { operationOf, type OperationRow } from '../../db/operations';
import { getVisibleOperation } from '../../db/queries/operations';
import type { AppDeps } from '../env';

export interface CancelRequest {
  reason?: string;
  children?: 'finish' | 'cancel';
}

/**
 * Cancels an operation (DELETE /v1/operations/{id}), in one transaction whether or not a worker
 * or Temporal is up: who asked is recorded (the first request wins), the operation's clean-up runs
 * (`endCancelledOperation`: the node put back, the operation `cancelled`, one event) and its
 * workflow is woken through the outbox; it finds its record finished and ends. A decommission is
 * cancelled only before its point of no return.
 */
export async function cancelOperation(
  deps: Pick<AppDeps, 'db'>,
  id: string,
  principal: Principal,
  request: CancelRequest,
): Promise<OperationRow> {
  const visible = await getVisibleOperation(deps.db, id, principal);
  if (request.children && !isPoolKind(visible.kind)) {
    throw new DrydockError(
      'INVALID_INPUT',
      `children applies to a pool drain or a rolling maintenance only, not a ${visible.kind}`,
      {
        kind: visible.kind,
      },
    );
  }
  // Answered once committed: a purge the node had already acknowledged is forgotten by the clean-up
  // (past cancelling: `succeeded`), which stands though the answer is a refusal.
  const ended = await deps.db.transaction(async (tx) => {
    // The node first, then the operation: the order every lifecycle step locks in.
    if (visible.nodeId) await lockNode(tx, visible.nodeId);
    const op = await operationOf(tx, id);
    if (isFinished(op.status)) return op;
    if (op.kind === 'decommission' && !decommissionCancellable(op)) {
      throw new DrydockError(
        'INVALID_STATE',
        'this decommission is past its point of no return (the node identity is revoked): it runs to the end',
        { status: op.status, kind: op.kind, phase: op.phase },
      );
    }
    const ask: CancellationRequest = {
      by: actorOf(principal),
      reason: request.reason ?? null,
      at: new Date().toISOString(),
      ...(isPoolKind(op.kind) ? { children: request.children ?? 'finish' } : {}),
    };
    await recordCancellation(tx, op.id, ask);
    return (await endCancelledOperation(tx, op.id, { actor: ask.by }))!;
  });
  return answered(ended);
}

/** A finished operation is the answer when it was cancelled; any other end is not the caller's to change. */
function answered(op: OperationRow): OperationRow {
  if (op.status === 'cancelled') return op;
  throw new DrydockError('INVALID_STATE', `operation ${op.id} already ${op.status}`, { status: op.status });
}

/**
 * Resumes a paused rolling maintenance, in one transaction with its record locked: its failures so
 * far no longer count toward `maxFailures` (`failedAtResume`), `pool.maintenance.resumed`, and its
 * workflow woken through the outbox to start the next nodes. One that is not paused is
 * INVALID_STATE, naming its phase; another kind of operation is INVALID_INPUT.
 */
export async function resumeOperation(
  deps: Pick<AppDeps, 'db'>,
  id: string,
  principal: Principal,
  reason: string | null,
): Promise<OperationRow> {
  const visible = await getVisibleOperation(deps.db, id, principal);
  if (visible.kind !== 'pool-maintenance') {
    throw new DrydockError('INVALID_INPUT', `only a rolling maintenance is resumed, not a ${visible.kind}`, {
      kind: visible.kind,
    });
  }
  return deps.db.transaction(async (tx) => {
    const [op] = await tx.select().from(operations).where(eq(operations.id, id)).for('update');
    if (op!.phase !== 'paused') {
      throw new DrydockError(
        'INVALID_STATE',
        `operation ${id} is ${op!.phase}, not paused: nothing to resume`,
        {
          phase: op!.phase,
        },
      );
    }
    const w = op!.waitingFor as PoolMaintenanceWaitingFor;
    const failed = w.counts.failed + w.counts.cancelled;
    const record = op!.result as Record<string, unknown>;
    const [resumed] = await tx
      .update(operations)
      .set({
        result: { ...record, failedAtResume: failed },
        // Maintaining again at once: a second resume is refused, the progress says so before the next look.
        phase: 'maintaining',
        waitingFor: { ...w, paused: false, failuresSinceResume: 0 },
        updatedAt: sql`now()`,
      })
      .where(eq(operations.id, id))
      .returning();
    await appendEvent(tx, {
      tenantId: null,
      type: 'pool.maintenance.resumed',
      actor: actorOf(principal),
      reason,
      operationId: id,
      data: { poolId: op!.poolId!, failed },
    });
    await enqueueWake(tx, op!.workflowId, `resumed by ${actorOf(principal)}`);
    return resumed!;
  });
}
