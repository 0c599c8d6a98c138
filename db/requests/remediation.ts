import { and, count, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { assertControllable } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import type { Condition } from '../../domain/node';
import { ENDING_KINDS } from '../../domain/operation';
import { isFinished, OPEN_OPERATION_STATUSES } from '../../domain/operation-status';
import {
  DEFAULT_MAX_UNHEALTHY,
  isStorm,
  remediationPlan,
  type RemediationPlan,
  type Storm,
} from '../../domain/remediation';
import type { Tx } from '../client';
import {
  recordOperatorCondition,
  reportCondition,
  unhandledConditions,
  type ConditionReport,
} from '../conditions';
import type { NodeRow } from '../nodes';
import { openOperation, type OperationRow } from '../operations';
import { escalateRemediation } from '../remediation';
import { nodes, operations, pools, type PoolPolicy } from '../schema';
import { requestOperation, type OperationRequest, type Requested } from './record';

export interface RemediationRequest extends OperationRequest {
  condition: string;
  /** Automatic remediations (an agent's report) are held back in a storm; an operator's are not. */
  automatic: boolean;
}

/** A remediation's record keeps what it began with: the condition, since when, and its plan. */
export interface RemediationRecord {
  condition: string;
  since: string;
  automatic: boolean;
  plan: RemediationPlan;
}

/**
 * A remediation, requested in the caller's transaction, unless one runs on the node (a report of
 * another condition then waits behind it: the running one's end requests the next). An operator's
 * condition the node has not reported is recorded first. The plan (ladder, attempt timeout,
 * healthyAfter) is resolved from the pool policy and kept on the operation. An automatic
 * remediation in a pool past `maxUnhealthy` while another runs there escalates at once
 * (`remediation-storm`): the operation ends in this transaction and no workflow starts.
 */
export function requestRemediation(tx: Tx, nodeId: string, request: RemediationRequest): Promise<Requested> {
  return requestRemediationOf(tx, nodeId, request, (node) =>
    node.conditions.find((c) => c.type === request.condition && c.status),
  );
}

/**
 * A condition report, the agent's or a scheduler's, in the caller's transaction: the condition on
 * the node (`reportCondition`), and a true one no remediation has handled yet requests one (or
 * waits behind the one that runs) — in a savepoint, so a refusal (the node cannot be remediated
 * now) leaves the report standing. `remediation`: the one it requested or joined.
 */
export async function reportAndRemediate(
  tx: Tx,
  nodeId: string,
  report: ConditionReport,
  actor: string,
): Promise<{ node: NodeRow; remediation: OperationRow | null }> {
  const { node, unhandled } = await reportCondition(tx, nodeId, report);
  if (!unhandled) return { node, remediation: null };
  const request = { actor, reason: report.reason, condition: report.type, automatic: true };
  try {
    const requested = await tx.transaction((savepoint) => requestRemediation(savepoint, nodeId, request));
    return { node, remediation: requested.operation };
  } catch (error) {
    if (!(error instanceof DrydockError)) throw error;
    return { node, remediation: null };
  }
}

/**
 * The remediation of the node's oldest true condition no remediation has handled, if any: what a
 * remediation's end requests, in its own transaction. Automatic unless an operator reported it.
 */
export async function requestNextRemediation(tx: Tx, node: NodeRow): Promise<Requested | undefined> {
  const [next] = await unhandledConditions(tx, node);
  // A node being purged or decommissioned starts nothing new: its conditions wait with it.
  if (!next || (await openOperation(tx, node.id, ENDING_KINDS))) return undefined;
  const request: RemediationRequest = {
    actor: 'system:remediation',
    reason: 'queued behind the previous remediation',
    condition: next.type,
    automatic: next.source !== 'operator',
  };
  return requestRemediationOf(tx, node.id, request, () => next);
}

async function requestRemediationOf(
  tx: Tx,
  nodeId: string,
  request: RemediationRequest,
  conditionOf: (node: NodeRow) => Condition | undefined,
): Promise<Requested> {
  let storm: Storm | null = null;
  let policy: PoolPolicy = {};
  let condition: Condition | undefined;
  let unhandled: string[] = [];
  const queued = () => unhandled.filter((type) => type !== condition?.type);
  const requested = await requestOperation(tx, nodeId, request, {
    kind: 'remediation',
    async prepare(tx, locked) {
      let node = locked;
      const reported = node.conditions.find((c) => c.type === request.condition && c.status);
      if (!reported && !request.automatic) {
        node = await recordOperatorCondition(tx, node, {
          type: request.condition,
          reason: request.reason,
          actor: request.actor,
        });
      }
      condition = conditionOf(node);
      unhandled = (await unhandledConditions(tx, node)).map((c) => c.type);
      return node;
    },
    async admit(tx, node) {
      assertControllable(node);
      if (!condition) {
        throw new DrydockError(
          'INVALID_STATE',
          `condition ${request.condition} is not reported true on this node`,
          {
            condition: request.condition,
          },
        );
      }
      if (!node.poolId) return;
      // One automatic request per pool at a time: concurrent reports cannot all slip under the limit.
      const locking = tx.select().from(pools).where(eq(pools.id, node.poolId));
      const [pool] = request.automatic ? await locking.for('update') : await locking;
      policy = pool?.policy ?? {};
      // Counted before this operation is recorded, so it does not count itself.
      if (request.automatic) storm = await stormInPool(tx, node, policy);
    },
    record: () => {
      const plan = remediationPlan(condition!.type, policy.remediation);
      const record: RemediationRecord = {
        condition: condition!.type,
        since: condition!.since,
        automatic: request.automatic,
        plan,
      };
      return {
        result: { ...record },
        waitingFor: {
          condition: condition!.type,
          attempt: 0,
          action: null,
          attemptDeadline: null,
          attempts: [],
          ladder: plan.ladder,
          queued: queued(),
        },
      };
    },
    async apply(tx, node, operation) {
      if (!storm) return { node };
      const escalated = await escalateRemediation(tx, node, operation, {
        reason: 'remediation-storm',
        attempts: [],
        status: 'failed',
        storm,
        queued: queued(),
      });
      return { node: escalated.node, ended: escalated.operation };
    },
  });
  // Joined a running remediation: what waits behind it is every condition no remediation handles.
  const joined = requested.operation;
  if (!requested.created && !isFinished(joined.status) && joined.waitingFor) {
    const [updated] = await tx
      .update(operations)
      .set({ waitingFor: { ...joined.waitingFor, queued: unhandled } as typeof joined.waitingFor })
      .where(eq(operations.id, joined.id))
      .returning();
    // The answer is the joined operation as it now is, what waits behind it listed.
    return { ...requested, operation: updated ?? joined };
  }
  return requested;
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
