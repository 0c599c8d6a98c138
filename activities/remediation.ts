import { and, count, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { assertControllable } from '../domain/controls';
import { DrydockError } from '../domain/errors';
import { newId } from '../domain/ids';
import type { Condition } from '../domain/node';
import { OPEN_OPERATION_STATUSES } from '../domain/operation-status';
import {
  conditionReason,
  DEFAULT_MAX_UNHEALTHY,
  isStorm,
  remediationPlan,
  type AttemptRecord,
  type RemediationPlan,
  type Storm,
} from '../domain/remediation';
import type { Db, Tx } from '../db/client';
import { recordOperatorCondition, unhandledConditions } from '../db/conditions';
import { appendEvent } from '../db/events';
import { lockNode, type NodeRow } from '../db/nodes';
import { finishOperation } from '../db/operations';
import { nodeCommands, nodes, operations, pools, type PoolPolicy } from '../db/schema';
import { cancelRungCommands, escalateRemediation } from '../db/remediation';
import { wakeNode } from '../db/wakeups';
import type {
  AttemptCheck,
  BeginInput,
  RemediationBegun,
  RemediationEnded,
  RemediationRequest,
} from '../workflows/definitions';
import type { WorkerMetrics } from '../observability/metrics';
import { beginOperation } from './begin';

export function createRemediationActivities(db: Db, metrics?: WorkerMetrics) {
  return {
    /**
     * Begin, in one transaction: the operation, unless one runs (then a report of another condition
     * is queued behind it). An operator's condition the node has not reported is recorded first
     * (`recordOperatorCondition`). The plan (ladder, attempt timeout, healthyAfter) is resolved from
     * the pool policy and kept on the operation. An automatic remediation in a pool past
     * `maxUnhealthy` while another runs there escalates at once (`remediation-storm`): no command.
     */
    async beginRemediation(input: BeginInput<RemediationRequest>) {
      let storm: Storm | null = null;
      let policy: PoolPolicy = {};
      let condition: Condition | undefined;
      let unhandled: Condition[] = [];
      let escalatedHere = false;
      const begun = await beginOperation<RemediationRequest, RemediationBegun>(db, input, {
        kind: 'remediation',
        async prepare(tx, locked) {
          let node = locked;
          const reported = node.conditions.find((c) => c.type === input.condition && c.status);
          if (!reported && !input.automatic && !input.queued) {
            node = await recordOperatorCondition(tx, node, {
              type: input.condition,
              reason: input.reason,
              actor: input.actor,
            });
          }
          unhandled = await unhandledConditions(tx, node);
          condition = input.queued
            ? unhandled[0]
            : node.conditions.find((c) => c.type === input.condition && c.status);
          return node;
        },
        async admit(tx, node) {
          assertControllable(node);
          if (!condition) {
            throw new DrydockError(
              'INVALID_STATE',
              input.queued
                ? 'no condition of this node waits for a remediation'
                : `condition ${input.condition} is not reported true on this node`,
              { condition: input.condition },
            );
          }
          if (!node.poolId) return;
          // One automatic start per pool at a time: concurrent reports cannot all slip under the limit.
          const locking = tx.select().from(pools).where(eq(pools.id, node.poolId));
          const [pool] = isAutomatic(input, condition) ? await locking.for('update') : await locking;
          policy = pool?.policy ?? {};
          // Counted before this operation is recorded, so it does not count itself.
          if (isAutomatic(input, condition)) storm = await stormInPool(tx, node, policy);
        },
        result: () => ({
          condition: condition!.type,
          since: condition!.since,
          automatic: isAutomatic(input, condition!),
          plan: remediationPlan(condition!.type, policy.remediation),
        }),
        async apply(tx, node, operation) {
          if (!storm) return { node };
          const escalated = await escalateRemediation(tx, node, operation, {
            reason: 'remediation-storm',
            attempts: [],
            status: 'failed',
            storm,
            queued: typesOf(unhandled, condition!.type),
          });
          escalatedHere = true;
          return { node: escalated.node, operation: escalated.operation };
        },
        answer: (result, operation) => {
          const recorded = operation.result as { condition?: string; plan?: RemediationPlan } | null;
          const type = recorded?.condition ?? condition?.type ?? input.condition;
          return {
            ...result,
            escalated: (operation.error as { reason?: string } | null)?.reason === 'remediation-storm',
            condition: type,
            ...(recorded?.plan ? { plan: recorded.plan } : {}),
            queued: typesOf(unhandled, type),
          };
        },
      });
      // Counted once the escalation committed; a begin retried after it finds it and counts nothing.
      if (escalatedHere) metrics?.stormEscalation();
      return begun;
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

    /**
     * Cleared: `node.remediation.succeeded`, operation succeeded (its result keeps what it began
     * with, and gets the attempts), the rung's command no longer needed. Answers the conditions
     * queued for the next remediation.
     */
    async succeedRemediation(input: {
      nodeId: string;
      operationId: string;
      attempts: AttemptRecord[];
    }): Promise<RemediationEnded> {
      let succeeded = false;
      const answer = await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const [op] = await tx.select().from(operations).where(eq(operations.id, input.operationId));
        const began = (op?.result ?? {}) as { condition?: string };
        const ended = await remediationEnded(tx, node, began.condition);
        const finished = await finishOperation(tx, input.operationId, 'succeeded', {
          result: { ...began, attempts: input.attempts },
        });
        if (!finished) return ended;
        await cancelRungCommands(tx, input.operationId);
        await appendEvent(tx, {
          nodeId: node.id,
          tenantId: node.tenantId,
          type: 'node.remediation.succeeded',
          actor: 'system:remediation',
          operationId: input.operationId,
          data: { attempts: input.attempts, ...(ended.queued.length > 0 ? { queued: ended.queued } : {}) },
        });
        succeeded = true;
        return ended;
      });
      if (succeeded) metrics?.remediationEnded('succeeded');
      return answer;
    },

    /**
     * Not cleared (the ladder exhausted, two attempts ran without clearing it, a step failed, or the
     * node was deleted): maintenance on and `node.remediation.escalated`. Answers the conditions
     * queued for the next remediation.
     */
    async escalateRemediation(input: {
      nodeId: string;
      operationId: string;
      condition: string;
      attempts: AttemptRecord[];
      reason: string;
      status: 'failed' | 'cancelled';
    }): Promise<RemediationEnded> {
      let escalated = false;
      const answer = await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const ended = await remediationEnded(tx, node, input.condition);
        const [op] = await tx.select().from(operations).where(eq(operations.id, input.operationId));
        if (!op || op.status !== 'running') return ended;
        await escalateRemediation(tx, node, op, { ...input, queued: ended.queued });
        escalated = true;
        return ended;
      });
      if (escalated) metrics?.remediationEnded(input.status === 'cancelled' ? 'cancelled' : 'escalated');
      return answer;
    },
  };
}

/** Whether a begin is automatic (held back in a storm): an agent's report, or a queued one the agent reported. */
function isAutomatic(input: RemediationRequest, condition: Condition): boolean {
  return input.queued ? condition.source !== 'operator' : input.automatic;
}

/** The types of `conditions` other than `type`. */
const typesOf = (conditions: Condition[], type: string) =>
  conditions.map((c) => c.type).filter((t) => t !== type);

/** What waits once the remediation of `type` ends: the node's other unhandled true conditions. */
async function remediationEnded(tx: Tx, node: NodeRow, type: string | undefined): Promise<RemediationEnded> {
  return { queued: typesOf(await unhandledConditions(tx, node), type ?? '') };
}

/**
 * Counts the pool's live nodes, those unhealthy or in remediation, and the other nodes in
 * remediation; a storm answer when over `maxUnhealthy` with another remediation running. The
 * caller holds the pool's row lock.
 */
async function stormInPool(tx: Tx, node: NodeRow, policy: PoolPolicy): Promise<Storm | null> {
  const poolId = node.poolId!;
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
                          and o.status in ${OPEN_OPERATION_STATUSES}))`,
      ),
    );
  const [others] = await tx
    .select({ n: count() })
    .from(operations)
    .where(
      and(
        eq(operations.poolId, poolId),
        eq(operations.kind, 'remediation'),
        inArray(operations.status, OPEN_OPERATION_STATUSES),
        ne(operations.nodeId, node.id),
      ),
    );
  const liveNodes = live?.n ?? 0;
  const unhealthyNodes = unhealthy?.n ?? 0;
  const remediating = others?.n ?? 0;
  const { maxUnhealthy } = policy;
  return isStorm(unhealthyNodes, liveNodes, maxUnhealthy, remediating)
    ? { liveNodes, unhealthyNodes, remediating, maxUnhealthy: maxUnhealthy ?? DEFAULT_MAX_UNHEALTHY }
    : null;
}
