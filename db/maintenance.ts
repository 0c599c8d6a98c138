import { and, eq, inArray, sql } from 'drizzle-orm';
import type { MaintenanceWaitingFor } from '../domain/maintenance-progress';
import type { Tx } from './client';
import { applyNodeChange, type NodeRow } from './nodes';
import { finishOperation, openOperation, type OperationRow } from './operations';
import { enqueueWake } from './outbox';
import { nodeCommands } from './schema';

// The ends of a node's maintenance that its workflow and a cancellation share
// (docs/lifecycle/maintenance.md).

/**
 * A step failed, in the look's transaction: the node in maintenance with the reason
 * (`node.maintenance.failed`), the maintenance's unstarted commands withdrawn, the operation failed.
 */
export async function failMaintenance(
  tx: Tx,
  node: NodeRow,
  op: OperationRow,
  w: MaintenanceWaitingFor,
  reason: string,
): Promise<OperationRow> {
  await withdrawPendingCommands(tx, op.id);
  const step = w.steps[w.step]?.step ?? 'maintenance';
  await applyNodeChange(
    tx,
    node,
    {
      patch: { maintenance: true },
      event: { type: 'node.maintenance.failed', data: { index: w.step, step, reason } },
    },
    { actor: 'system:maintenance', reason, operationId: op.id },
  );
  const ended = await finishOperation(tx, op.id, 'failed', {
    waitingFor: w,
    error: { reason, step, index: w.step },
  });
  return ended!;
}

/** Withdraws the maintenance's commands its node has not started: what runs is left to report. */
export async function withdrawPendingCommands(tx: Tx, operationId: string): Promise<number> {
  const withdrawn = await tx
    .update(nodeCommands)
    .set({ status: 'cancelled', finishedAt: sql`now()`, refuseReason: 'its maintenance ended' })
    .where(and(eq(nodeCommands.operationId, operationId), inArray(nodeCommands.status, ['pending'])))
    .returning({ id: nodeCommands.id });
  return withdrawn.length;
}

/**
 * Wakes the node's open maintenance, if any, through the outbox in the caller's transaction: what
 * its step waits for may have come (the node back on a new boot, a probe's condition changed).
 */
export async function wakeMaintenance(tx: Tx, nodeId: string, why: string): Promise<void> {
  const open = await openOperation(tx, nodeId, 'maintenance');
  if (open) await enqueueWake(tx, open.workflowId, why);
}
