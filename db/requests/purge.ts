import type { KeyObject } from 'node:crypto';
import { assertControllable } from '../../domain/controls';
import { newId } from '../../domain/ids';
import { moveTarget } from '../../domain/provision';
import { encodePurgePayload, signPayload } from '../../domain/signing';
import { forceReleaseOpenAllocations } from '../allocations';
import { supersedeDrain } from '../cancellation';
import type { Tx } from '../client';
import { applyNodeChange, checkVersion } from '../nodes';
import { PURGE_ACTOR, refuseWhileHeld, refuseWithoutIdentity } from '../purge';
import { nodeCommands } from '../schema';
import { wakeNode } from '../wakeups';
import { requestOperation, type OperationRequest, type Requested } from './record';

/**
 * A purge's request: `force` releases the node's open allocations in the request's transaction;
 * without it a node that holds any is refused.
 */
export interface PurgeRequest extends OperationRequest {
  force: boolean;
}

/** What signs a purge command: the cluster CA's key, and the cluster it names. */
export interface PurgeSigner {
  clusterId: string;
  privateKey: KeyObject;
}

/**
 * The purge, requested in the caller's transaction: `purging` (out of placement at once), a purge
 * command signed with the cluster CA queued for the node (delivered on its next poll, whether or
 * not a worker is up), `node.purge.requested`, the operation `pending` and its workflow's start in
 * the outbox; a drain of the node ends, superseded (`supersedeDrain`). A node holding open
 * allocations is refused (`refuseWhileHeld`) unless the request says `force`: then they are
 * released here (`allocation.force-released` each).
 */
export function requestPurge(
  tx: Tx,
  nodeId: string,
  request: PurgeRequest,
  signer: PurgeSigner,
): Promise<Requested> {
  const commandId = newId('cmd');
  return requestOperation(tx, nodeId, request, {
    kind: 'purge',
    async admit(tx, node) {
      assertControllable(node);
      checkVersion(node, request.version);
      refuseWithoutIdentity(node);
      if (!request.force) await refuseWhileHeld(tx, node);
    },
    record: () => ({ waitingFor: { commandId, refusedReason: null } }),
    async apply(tx, locked, operation) {
      // Anything still open is what `force` let through (`admit` refused it otherwise).
      await forceReleaseOpenAllocations(tx, locked.id, { actor: PURGE_ACTOR, operationId: operation.id });
      const node = await supersedeDrain(tx, locked, { actor: request.actor, operation });
      const payload = encodePurgePayload({
        clusterId: signer.clusterId,
        nodeId: node.id,
        commandId,
        kind: 'purge',
        issuedAt: new Date().toISOString(),
      });
      await tx.insert(nodeCommands).values({
        id: commandId,
        nodeId: node.id,
        kind: 'purge',
        payload,
        signature: signPayload(signer.privateKey, payload),
        operationId: operation.id,
      });
      const updated = await applyNodeChange(
        tx,
        node,
        {
          patch: { provisionState: moveTarget('purge') },
          event: { type: 'node.purge.requested', data: { commandId } },
        },
        { actor: request.actor, reason: request.reason, operationId: operation.id },
      );
      await wakeNode(tx, node.id);
      return { node: updated };
    },
  });
}
