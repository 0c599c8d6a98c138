import { assertControllable, deletionRefusal } from '../domain/controls';
import { actorOf, type Principal } from '../domain/principal';
import { countOpenAllocations } from './queries/allocations';
import type { Db } from './client';
import { cancelPendingCommands, revokeIdentity } from './identity';
import { wakeNode } from './wakeups';
import { applyNodeChange, checkVersion, labelsOf, lockNode, nodeState } from './nodes';

/**
 * Deletes a node in one transaction: checks the states and open allocations of docs/concepts.md,
 * then leaves a tombstone (`deletedAt`; the row stays for history) and one `node.deleted`.
 * A retry on a deleted node answers `deleted: false` and changes nothing.
 */
export async function deleteNode(
  db: Db,
  input: { nodeId: string; principal: Principal; version?: number; reason?: string | null },
): Promise<{ nodeId: string; deleted: boolean; poolId: string | null }> {
  return db.transaction(async (tx) => {
    const node = await lockNode(tx, input.nodeId, input.principal);
    if (node.deletedAt) return { nodeId: node.id, deleted: false, poolId: node.poolId };
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
    return { nodeId: node.id, deleted: true, poolId: node.poolId };
  });
}
