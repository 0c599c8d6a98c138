import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { assertControllable } from '../domain/controls';
import { DrydockError } from '../domain/errors';
import { newId } from '../domain/ids';
import { conditionReason, isStorm, type AttemptRecord, type Storm } from '../domain/remediation';
import type { Db, Tx } from '../db/client';
import { appendEvent } from '../db/events';
import { lockNode } from '../db/nodes';
import { finishOperation } from '../db/operations';
import { nodeCommands, nodes, operations, pools } from '../db/schema';
import { cancelRungCommands, escalateRemediation } from '../db/remediation';
import { wakeNode } from '../db/wakeups';
import type {
  AttemptCheck,
  BeginInput,
  RemediationBegun,
  RemediationRequest,
} from '../workflows/definitions';
import { beginOperation } from './begin';

export function createRemediationActivities(db: Db) {
  return {
    /**
     * Begin, in one transaction: the operation, unless one runs. An automatic remediation in a pool
     * already past `maxUnhealthy` escalates at once (`remediation-storm`): no command is sent.
     */
    async beginRemediation(input: BeginInput<RemediationRequest>) {
      let storm: Storm | null = null;
      return beginOperation<RemediationRequest, RemediationBegun>(db, input, {
        kind: 'remediation',
        async admit(tx, node) {
          assertControllable(node);
          if (!node.conditions.some((c) => c.type === input.condition && c.status)) {
            throw new DrydockError(
              'INVALID_STATE',
              `condition ${input.condition} is not reported true on this node`,
              { condition: input.condition },
            );
          }
          // Counted before this operation is recorded, so it does not count itself.
          storm = input.automatic && node.poolId ? await stormInPool(tx, node.poolId) : null;
        },
        result: { condition: input.condition, automatic: input.automatic },
        async apply(tx, node, operation) {
          if (!storm) return { node };
          const escalated = await escalateRemediation(tx, node, operation, {
            reason: 'remediation-storm',
            attempts: [],
            status: 'failed',
            storm,
          });
          return { node: escalated.node, operation: escalated.operation };
        },
        answer: (result, operation) => ({
          ...result,
          escalated: (operation.error as { reason?: string } | null)?.reason === 'remediation-storm',
          condition: (operation.result as { condition?: string } | null)?.condition ?? input.condition,
        }),
      });
    },

    /** One rung: the action queued as a command to the node, and `node.remediation.attempted`. */
    async startAttempt(input: {
      nodeId: string;
      operationId: string;
      attempt: number;
      action: string;
      condition: string;
    }): Promise<string> {
      return db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const [existing] = await tx
          .select()
          .from(nodeCommands)
          .where(
            and(
              eq(nodeCommands.operationId, input.operationId),
              sql`${nodeCommands.data}->>'attempt' = ${String(input.attempt)}`,
            ),
          );
        if (existing) return existing.id;
        // The previous rung's command, if still unanswered, is moot now.
        await cancelRungCommands(tx, input.operationId);
        const commandId = newId('cmd');
        await tx.insert(nodeCommands).values({
          id: commandId,
          nodeId: node.id,
          kind: 'remediate',
          action: input.action,
          operationId: input.operationId,
          data: { attempt: input.attempt, condition: input.condition },
        });
        await appendEvent(tx, {
          nodeId: node.id,
          tenantId: node.tenantId,
          type: 'node.remediation.attempted',
          actor: 'system:remediation',
          operationId: input.operationId,
          data: { attempt: input.attempt, action: input.action, condition: input.condition, commandId },
        });
        await wakeNode(tx, node.id);
        return commandId;
      });
    },

    /** Where an attempt stands: the condition, the command's answer, whether the node is gone. */
    async checkAttempt(input: {
      nodeId: string;
      commandId: string;
      condition: string;
    }): Promise<AttemptCheck> {
      const [node] = await db.select().from(nodes).where(eq(nodes.id, input.nodeId));
      const [command] = await db.select().from(nodeCommands).where(eq(nodeCommands.id, input.commandId));
      return {
        cleared: !node?.noScheduleReasons.includes(conditionReason(input.condition)),
        command: command?.status ?? 'cancelled',
        refuseReason: command?.refuseReason ?? null,
        deleted: !node || node.deletedAt !== null,
      };
    },

    /** Cleared: `node.remediation.succeeded`, operation succeeded, the rung's command no longer needed. */
    async succeedRemediation(input: {
      nodeId: string;
      operationId: string;
      attempts: AttemptRecord[];
    }): Promise<void> {
      await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const finished = await finishOperation(tx, input.operationId, 'succeeded', {
          result: { attempts: input.attempts },
        });
        if (!finished) return;
        await cancelRungCommands(tx, input.operationId);
        await appendEvent(tx, {
          nodeId: node.id,
          tenantId: node.tenantId,
          type: 'node.remediation.succeeded',
          actor: 'system:remediation',
          operationId: input.operationId,
          data: { attempts: input.attempts },
        });
      });
    },

    /** Failed, cancelled or not cleared in two attempts: maintenance on and `node.remediation.escalated`. */
    async escalateRemediation(input: {
      nodeId: string;
      operationId: string;
      condition: string;
      attempts: AttemptRecord[];
      reason: string;
      status: 'failed' | 'cancelled';
    }): Promise<void> {
      await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const [op] = await tx.select().from(operations).where(eq(operations.id, input.operationId));
        if (!op || op.status !== 'running') return;
        await escalateRemediation(tx, node, op, input);
      });
    },
  };
}

/** Counts the pool's live nodes and those unhealthy or in remediation; a storm answer when over. */
async function stormInPool(tx: Tx, poolId: string): Promise<Storm | null> {
  // One automatic start per pool at a time: concurrent reports cannot all slip under the limit.
  const [pool] = await tx.select().from(pools).where(eq(pools.id, poolId)).for('update');
  const [live] = await tx
    .select({ n: count() })
    .from(nodes)
    .where(and(eq(nodes.poolId, poolId), isNull(nodes.deletedAt)));
  const [unhealthy] = await tx
    .select({ n: count() })
    .from(nodes)
    .where(
      and(
        eq(nodes.poolId, poolId),
        isNull(nodes.deletedAt),
        sql`(exists (select 1 from unnest(${nodes.noScheduleReasons}) r where r like 'condition:%')
             or exists (select 1 from ${operations} o where o.node_id = ${nodes.id} and o.kind = 'remediation'
                          and o.status in ('pending', 'running')))`,
      ),
    );
  const liveNodes = live?.n ?? 0;
  const unhealthyNodes = unhealthy?.n ?? 0;
  const maxUnhealthy = pool?.policy.maxUnhealthy;
  return isStorm(unhealthyNodes, liveNodes, maxUnhealthy)
    ? { liveNodes, unhealthyNodes, maxUnhealthy: maxUnhealthy ?? '40%' }
    : null;
}
