import { DrydockError } from '../domain/errors';
import { forceReleaseOpenAllocations } from './allocations';
import type { Tx } from './client';
import { cancelPendingCommands, revokeIdentity } from './identity';
import { applyNodeChange, type NodeRow } from './nodes';
import { finishOperation, type OperationRow } from './operations';
import { openAllocationsOf } from './queries/allocations';
import { wakeNode } from './wakeups';

/** Who a purge's own steps are recorded as: `node.purged`, and the allocations it releases. */
export const PURGE_ACTOR = 'system:purge';

/** How many open allocations a refused purge names (the count is always exact). */
const NAMED_ALLOCATIONS = 20;

/**
 * A purge of a node whose identity was revoked is refused (INVALID_STATE) before anything changes:
 * no agent can fetch or acknowledge the signed command any more, so it would wait until someone
 * deleted the node. The message says what to do instead. A revoke raises the identity generation,
 * and nothing of a later generation is ever issued (the machine joins again as a new node).
 */
export function refuseWithoutIdentity(node: NodeRow): void {
  if (node.identityGeneration <= 1) return;
  throw new DrydockError(
    'INVALID_STATE',
    `node ${node.id}'s identity was revoked, so no agent can acknowledge a purge; ` +
      `delete the node (DELETE /v1/nodes/${node.id}) to forget it, or decommission it`,
    { identityGeneration: node.identityGeneration, instead: ['delete', 'decommission'] },
  );
}

/**
 * A purge without `force` of a node that still holds work is refused (INVALID_STATE) before
 * anything changes, naming the open allocations (ids and tenants): forgetting the node would leave
 * them pointing at a node that is gone. Called under the node's lock, so no placement slips in.
 */
export async function refuseWhileHeld(tx: Tx, node: NodeRow): Promise<void> {
  const open = await openAllocationsOf(tx, node.id, NAMED_ALLOCATIONS);
  if (open.total === 0) return;
  const named = open.allocations.map((a) => `${a.id} of ${a.tenantId}`).join(', ');
  const more =
    open.total > open.allocations.length ? ` and ${open.total - open.allocations.length} more` : '';
  throw new DrydockError(
    'INVALID_STATE',
    `node ${node.id} holds ${open.total} open allocation${open.total === 1 ? '' : 's'} (${named}${more}); ` +
      'release them first, or purge with "force": true to release them with the purge',
    { openAllocations: open.total, allocations: open.allocations },
  );
}

/**
 * The node acknowledged its purge: forget it (tombstone, credentials and certificates revoked,
 * pending commands cancelled, `node.purged`, operation succeeded), on the locked node. Idempotent.
 * Nothing is left pointing at the forgotten node: an allocation still open (one a purge begun
 * before purges refused held nodes let through) is released by force, as the wiped machine no
 * longer runs it.
 */
export async function forgetPurgedNode(
  tx: Tx,
  node: NodeRow,
  operationId: string,
): Promise<OperationRow | undefined> {
  const finished = await finishOperation(tx, operationId, 'succeeded', { result: { purged: true } });
  if (!finished) return undefined;
  await forceReleaseOpenAllocations(tx, node.id, { actor: PURGE_ACTOR, operationId });
  await revokeIdentity(tx, node.id, 'purged');
  await cancelPendingCommands(tx, node.id);
  await applyNodeChange(
    tx,
    node,
    { patch: { deletedAt: node.deletedAt ?? new Date() }, event: { type: 'node.purged' } },
    { actor: PURGE_ACTOR, operationId },
  );
  await wakeNode(tx, node.id);
  return finished;
}
