import { DrydockError } from '../../domain/errors';
import { isFinished, type CancellationRequest } from '../../domain/operation';
import { actorOf, type Principal } from '../../domain/principal';
import { decommissionCancellable, endCancelledOperation, recordCancellation } from '../../db/cancellation';
import { lockNode } from '../../db/nodes';
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
  if (request.children && visible.kind !== 'pool-drain') {
    throw new DrydockError('INVALID_INPUT', `children applies to a pool drain only, not a ${visible.kind}`, {
      kind: visible.kind,
    });
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
      ...(op.kind === 'pool-drain' ? { children: request.children ?? 'finish' } : {}),
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
