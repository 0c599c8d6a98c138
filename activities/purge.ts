import { and, eq } from 'drizzle-orm';
import type { PurgeProgress } from '../domain/progress';
import type { Db } from '../db/client';
import { lockNode } from '../db/nodes';
import { finishOperation, recordProgress } from '../db/operations';
import { forgetPurgedNode } from '../db/purge';
import { progressOf } from '../db/queries/operations';
import { nodeCommands } from '../db/schema';
import { beginOperationRun } from './begin';

/** How often a purge looks at its command without a wake-up (a lost one costs at most this). */
const RECHECK_MS = 60_000;

export function createPurgeActivities(db: Db) {
  return {
    /**
     * One look at a purge, in one transaction: the node acknowledged → it is forgotten (tombstone,
     * credentials and certificates revoked, pending commands cancelled, `node.purged`, operation
     * succeeded); the node was deleted meanwhile → the purge ends `cancelled`; the node refused →
     * it stays purging, and the operation says why; else it still waits for the node. The first
     * look begins the operation (`beginOperationRun`).
     */
    async lookAtPurge(input: { nodeId: string; operationId: string }): Promise<PurgeProgress> {
      return db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const op = await beginOperationRun(tx, input.operationId, 'waiting-for-node');
        if (op.status !== 'running') return progressOf(op) as PurgeProgress;
        const [command] = await tx
          .select()
          .from(nodeCommands)
          .where(and(eq(nodeCommands.operationId, op.id), eq(nodeCommands.kind, 'purge')));
        const ended =
          command?.status === 'acked'
            ? await forgetPurgedNode(tx, node, op.id)
            : node.deletedAt
              ? await finishOperation(tx, op.id, 'cancelled', { result: { forgottenBy: 'delete' } })
              : undefined;
        if (ended) return progressOf(ended) as PurgeProgress;
        const refused = command?.status === 'refused';
        const recorded = await recordProgress(tx, op.id, {
          phase: refused ? 'refused' : 'waiting-for-node',
          waitingFor: {
            commandId: command?.id ?? null,
            refusedReason: refused ? command.refuseReason : null,
          },
          nextCheckAt: new Date(Date.now() + RECHECK_MS),
        });
        return progressOf(recorded!) as PurgeProgress;
      });
    },
  };
}
