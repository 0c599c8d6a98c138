import { and, eq, inArray, sql } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES } from '../domain/command-status';
import { finishDrain } from '../domain/controls';
import { isDraining } from '../domain/node';
import type { Db } from '../db/client';
import { stopWaiting } from '../db/disruptions';
import { applyNodeChange, lockNode } from '../db/nodes';
import { finishOperation } from '../db/operations';
import { nodeCommands } from '../db/schema';

/** Why a step gave up: the refusal's API code, its message and the activity that refused. */
export interface StepFailure {
  code: string;
  reason: string;
  step: string;
}

export function createFailureActivities(db: Db) {
  return {
    /**
     * A step after begin failed for good, in one transaction: the operation ends `failed` with the
     * reason in `error`, its commands not yet delivered are cancelled (a node never acts for an
     * operation that gave up), and a drain's `draining` comes off (`node.drain.failed`; the node
     * stays cordoned) so the next drain starts afresh, and no longer waits for a disruption-budget
     * slot. A finished operation is left as it is.
     */
    async failOperation(input: {
      /** Null for an operation of no node (a pool drain). */
      nodeId: string | null;
      operationId: string;
      failure: StepFailure;
    }): Promise<boolean> {
      return db.transaction(async (tx) => {
        const node = input.nodeId ? await lockNode(tx, input.nodeId) : null;
        const failed = await finishOperation(tx, input.operationId, 'failed', {
          error: { ...input.failure },
        });
        if (!failed) return false;
        await tx
          .update(nodeCommands)
          .set({ status: 'cancelled', finishedAt: sql`now()` })
          .where(
            and(eq(nodeCommands.operationId, failed.id), inArray(nodeCommands.status, OPEN_COMMAND_STATUSES)),
          );
        if (!node) return true;
        if (failed.kind === 'drain') await stopWaiting(tx, node.id);
        if (failed.kind === 'drain' && isDraining(node)) {
          await applyNodeChange(
            tx,
            node,
            {
              ...finishDrain(node),
              event: {
                type: 'node.drain.failed',
                data: { code: input.failure.code, step: input.failure.step },
              },
            },
            { actor: 'system:drain', reason: input.failure.reason, operationId: failed.id },
          );
        }
        return true;
      });
    },
  };
}
