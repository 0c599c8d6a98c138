import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { ClusterCa } from '../ca';
import { assertControllable } from '../domain/controls';
import { newId } from '../domain/ids';
import { encodePurgePayload, signPayload } from '../domain/signing';
import { moveTarget } from '../domain/provision';
import type { Db } from '../db/client';
import { supersedeDrain } from '../db/cancellation';
import { applyNodeChange, checkVersion, lockNode } from '../db/nodes';
import { finishOperation } from '../db/operations';
import { forceReleaseOpenAllocations } from '../db/allocations';
import { forgetPurgedNode, PURGE_ACTOR, refuseWhileHeld } from '../db/purge';
import { nodeCommands, nodes } from '../db/schema';
import { wakeNode } from '../db/wakeups';
import type { BeginInput, BeginResult, PurgeCheck, PurgeRequest } from '../workflows/definitions';
import { beginOperation } from './begin';
import { wakeBudgetWaiters } from './signals';
import type { Logger } from '../observability/log';

export function createPurgeActivities(
  db: Db,
  deps: { ca: ClusterCa; clusterId: string; temporal: Client; log: Logger },
) {
  return {
    /**
     * The purge begins, in one transaction: `purging` (out of placement at once), a purge command
     * signed with the cluster CA queued for the node, `node.purge.requested`, operation `running`;
     * a drain of the node ends, superseded (`supersedeDrain`). A node holding open allocations is
     * refused (`refuseWhileHeld`) unless the request says `force`: then they are released here
     * (`allocation.force-released` each), in the same transaction.
     */
    async beginPurge(input: BeginInput<PurgeRequest>): Promise<BeginResult> {
      return beginOperation(db, input, {
        kind: 'purge',
        async admit(tx, node) {
          assertControllable(node);
          checkVersion(node, input.version);
          if (!input.force) await refuseWhileHeld(tx, node);
        },
        async apply(tx, locked, operation) {
          // Anything still open is what `force` let through (`admit` refused it otherwise).
          await forceReleaseOpenAllocations(tx, locked.id, { actor: PURGE_ACTOR, operationId: operation.id });
          const node = await supersedeDrain(tx, locked, { actor: input.actor, operation });
          const commandId = newId('cmd');
          const payload = encodePurgePayload({
            clusterId: deps.clusterId,
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
            signature: signPayload(deps.ca.privateKey, payload),
            operationId: operation.id,
          });
          const updated = await applyNodeChange(
            tx,
            node,
            {
              patch: { provisionState: moveTarget('purge') },
              event: { type: 'node.purge.requested', data: { commandId } },
            },
            { actor: input.actor, reason: input.reason, operationId: operation.id },
          );
          await wakeNode(tx, node.id);
          return { node: updated };
        },
      });
    },

    /** Where the purge stands: the command's answer, or the node forgotten by a DELETE. */
    async checkPurge(input: { nodeId: string; operationId: string }): Promise<PurgeCheck> {
      const [command] = await db
        .select()
        .from(nodeCommands)
        .where(and(eq(nodeCommands.operationId, input.operationId), eq(nodeCommands.kind, 'purge')));
      const [node] = await db
        .select({ deletedAt: nodes.deletedAt })
        .from(nodes)
        .where(eq(nodes.id, input.nodeId));
      if (node?.deletedAt && command?.status !== 'acked') return { state: 'deleted' };
      return {
        state: command?.status === 'acked' ? 'acked' : command?.status === 'refused' ? 'refused' : 'waiting',
        commandId: command?.id ?? null,
        refuseReason: command?.refuseReason ?? null,
      };
    },

    /**
     * The node acknowledged: forget it in one transaction (tombstone, credentials and certificates
     * revoked, pending commands cancelled, `node.purged`, operation succeeded), then wake the drains
     * waiting for the budget slot a forgotten node gives back. Idempotent.
     */
    async forgetPurgedNode(input: { nodeId: string; operationId: string }): Promise<'purged'> {
      const poolId = await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        await forgetPurgedNode(tx, node, input.operationId);
        return node.poolId;
      });
      await wakeBudgetWaiters({ db, temporal: deps.temporal, log: deps.log }, poolId);
      return 'purged';
    },

    /** A DELETE forgot the purging node: the purge ends `cancelled`. */
    async cancelPurge(input: { operationId: string }): Promise<void> {
      await db.transaction(async (tx) => {
        await finishOperation(tx, input.operationId, 'cancelled', { result: { forgottenBy: 'delete' } });
      });
    },
  };
}
