import { and, eq, inArray } from 'drizzle-orm';
import { assertControllable, deletionRefusal } from '../domain/controls';
import { OPEN_OPERATION_STATUSES } from '../domain/operation-status';
import { actorOf, type Principal } from '../domain/principal';
import { endCancelledOperation } from './cancellation';
import { finishOperation } from './operations';
import { enqueueWake } from './outbox';
import { operations } from './schema';
import { countOpenAllocations } from './queries/allocations';
import type { Db } from './client';
import { cancelPendingCommands, revokeIdentity } from './identity';
import { wakeNode } from './wakeups';
import { applyNodeChange, checkVersion, labelsOf, lockNode, nodeState } from './nodes';

/**
 * Deletes a node in one transaction: checks the states and open allocations of docs/concepts.md,
 * then leaves a tombstone (`deletedAt`; the row stays for history) and one `node.deleted`; the
 * node's open operations end with it (a purge `cancelled`: the node is forgotten without its
 * answer; any other as cancelled by the caller) and their workflows are woken.
 * A retry on a deleted node answers `deleted: false` and changes nothing.
 */
export async function deleteNode(
  db: Db,
  input: { nodeId: string; principal: Principal; version?: number; reason?: string | null },
): Promise<{ nodeId: string; deleted: boolean }> {
  return db.transaction(async (tx) => {
    const node = await lockNode(tx, input.nodeId, input.principal);
    if (node.deletedAt) return { nodeId: node.id, deleted: false };
    assertControllable(node);
    checkVersion(node, input.version);
    const refusal = deletionRefusal(
      nodeState(node, await labelsOf(tx, node.id)),
      await countOpenAllocations(tx, node.id),
    );
    if (refusal) throw refusal;
    await revokeIdentity(tx, node.id, 'node-deleted');
    await cancelPendingCommands(tx, node.id);
    await wakeNode(tx, node.id);
    await applyNodeChange(
      tx,
      node,
      { patch: { deletedAt: new Date() }, event: { type: 'node.deleted' } },
      { actor: actorOf(input.principal), reason: input.reason },
    );
    const open = await tx
      .select()
      .from(operations)
      .where(and(eq(operations.nodeId, node.id), inArray(operations.status, OPEN_OPERATION_STATUSES)));
    for (const op of open) {
      if (op.kind !== 'purge') {
        await endCancelledOperation(tx, op.id, { actor: actorOf(input.principal) });
        continue;
      }
      await finishOperation(tx, op.id, 'cancelled', { result: { forgottenBy: 'delete' } });
      await enqueueWake(tx, op.workflowId, 'the node was deleted');
    }
    return { nodeId: node.id, deleted: true };
  });
}
