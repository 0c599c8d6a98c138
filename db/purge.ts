import type { Tx } from './client';
import { cancelPendingCommands, revokeIdentity } from './identity';
import { applyNodeChange, type NodeRow } from './nodes';
import { finishOperation, type OperationRow } from './operations';
import { wakeNode } from './wakeups';

/**
 * The node acknowledged its purge: forget it (tombstone, credentials and certificates revoked,
 * pending commands cancelled, `node.purged`, operation succeeded), on the locked node. Idempotent.
 */
export async function forgetPurgedNode(
  tx: Tx,
  node: NodeRow,
  operationId: string,
): Promise<OperationRow | undefined> {
  const finished = await finishOperation(tx, operationId, 'succeeded', { result: { purged: true } });
  if (!finished) return undefined;
  await revokeIdentity(tx, node.id, 'purged');
  await cancelPendingCommands(tx, node.id);
  await applyNodeChange(
    tx,
    node,
    { patch: { deletedAt: node.deletedAt ?? new Date() }, event: { type: 'node.purged' } },
    { actor: 'system:purge', operationId },
  );
  await wakeNode(tx, node.id);
  return finished;
}
