import { and, eq, inArray, sql } from 'drizzle-orm';
import { assertControllable } from '../domain/controls';
import { DrydockError } from '../domain/errors';
import { NODE_UNREACHABLE } from '../domain/liveness';
import type { Condition, ConditionSource } from '../domain/node';
import { OPERATION_WORKFLOWS } from '../domain/operation';
import { actorOf, type Principal } from '../domain/principal';
import { conditionReason } from '../domain/remediation';
import type { Tx } from './client';
import { appendEvent } from './events';
import { wakeMaintenance } from './maintenance';
import { enqueueWake } from './outbox';
import { checkVersion, lockNode, readNodeView, type NodeRow, type NodeView } from './nodes';
import { nodes, operations } from './schema';

/** A report of one condition: its agent's (no `source`), or a scheduler's view of the node. */
export interface ConditionReport {
  type: string;
  status: boolean;
  reason: string | null;
  source?: 'scheduler';
}

/**
 * An agent's condition report (or a scheduler's: `source: "scheduler"`), in the caller's
 * transaction: the condition on the node, and its `condition:<type>` NoSchedule reason while it is
 * true. A report that changes nothing is a no-op. `unhandled`: the condition is true and no
 * remediation has been requested for it since it became true. A `false` report of a true
 * condition wakes its remediation (`turnConditionFalse`).
 */
export async function reportCondition(
  tx: Tx,
  nodeId: string,
  report: ConditionReport,
): Promise<{ node: NodeRow; unhandled: boolean }> {
  {
    const node = await lockNode(tx, nodeId);
    assertControllable(node);
    const previous = node.conditions.find((c) => c.type === report.type);
    const wasTrue = previous?.status === true;
    const sameReason = (previous?.reason ?? null) === report.reason;
    const sameSource = (previous?.source ?? null) === (report.source ?? null);
    const unchanged = previous && previous.status === report.status && sameReason && sameSource;
    const updated = unchanged
      ? node
      : report.status
        ? await writeCondition(tx, node, {
            type: report.type,
            status: true,
            reason: report.reason,
            since: wasTrue && previous ? previous.since : new Date().toISOString(),
            ...(report.source ? { source: report.source } : {}),
          })
        : await turnConditionFalse(tx, node, report);
    // A maintenance verifying the node's probes looks again.
    if (!unchanged) await wakeMaintenance(tx, node.id, `condition ${report.type} ${report.status}`);
    const unhandled =
      report.status && (await unhandledConditions(tx, updated)).some((c) => c.type === report.type);
    return { node: updated, unhandled };
  }
}

/**
 * An operator's report of a condition the node has not reported true, on the locked node: the
 * condition recorded true with `source: "operator"`, `condition:<type>` in its NoSchedule reasons,
 * and `node.condition.reported` naming who. The agent's `false` report of that type clears it.
 */
export async function recordOperatorCondition(
  tx: Tx,
  node: NodeRow,
  report: { type: string; reason: string | null; actor: string },
): Promise<NodeRow> {
  assertControllable(node);
  const updated = await writeCondition(tx, node, {
    type: report.type,
    status: true,
    reason: report.reason,
    since: new Date().toISOString(),
    source: 'operator',
  });
  await appendEvent(tx, {
    nodeId: node.id,
    tenantId: node.tenantId,
    type: 'node.condition.reported',
    actor: report.actor,
    reason: report.reason,
    data: { type: report.type, reason: report.reason, source: 'operator' },
  });
  return updated;
}

/**
 * An operator's clear of a condition by hand, in the caller's transaction: the node locked
 * (NOT_FOUND when the principal cannot see it), its version checked, the condition turned false
 * as the agent's `false` report turns it (`turnConditionFalse`), marked `source: "operator"` with
 * the operator's reason, and `node.condition.cleared` naming who and what the condition was. A
 * condition that is not true on the node is INVALID_STATE, and so is the liveness sweep's
 * `NodeUnreachable` (the node's next heartbeat clears it, with its liveness).
 */
export async function clearConditionByHand(
  tx: Tx,
  input: { nodeId: string; principal: Principal; version?: number; type: string; reason: string },
): Promise<NodeView> {
  const node = await lockNode(tx, input.nodeId, input.principal);
  assertControllable(node);
  checkVersion(node, input.version);
  if (input.type === NODE_UNREACHABLE) {
    throw new DrydockError(
      'INVALID_STATE',
      `${NODE_UNREACHABLE} is the liveness sweep's: the node's next heartbeat clears it`,
      { condition: input.type },
    );
  }
  const condition = node.conditions.find((c) => c.type === input.type && c.status);
  if (!condition) {
    throw new DrydockError('INVALID_STATE', `condition ${input.type} is not true on node ${node.id}`, {
      condition: input.type,
      trueConditions: node.conditions.filter((c) => c.status).map((c) => c.type),
    });
  }
  const updated = await turnConditionFalse(tx, node, {
    type: input.type,
    reason: input.reason,
    source: 'operator',
  });
  await wakeMaintenance(tx, node.id, `condition ${input.type} cleared by hand`);
  await appendEvent(tx, {
    nodeId: node.id,
    tenantId: node.tenantId,
    type: 'node.condition.cleared',
    actor: actorOf(input.principal),
    reason: input.reason,
    data: { type: input.type, was: { reason: condition.reason, since: condition.since } },
  });
  return readNodeView(tx, updated);
}

/**
 * The one way a condition turns false, on the locked node, whoever clears it (the agent's `false`
 * report, an operator's clear): the condition false — `since` now when it was true, kept when it
 * was false already — and its `condition:<type>` NoSchedule reason gone. One that was true wakes
 * the node's remediation through the outbox, in the same transaction: one waiting for it sees it
 * cleared.
 */
async function turnConditionFalse(
  tx: Tx,
  node: NodeRow,
  cleared: { type: string; reason: string | null; source?: ConditionSource },
): Promise<NodeRow> {
  const previous = node.conditions.find((c) => c.type === cleared.type);
  const updated = await writeCondition(tx, node, {
    type: cleared.type,
    status: false,
    reason: cleared.reason,
    since: previous && !previous.status ? previous.since : new Date().toISOString(),
    ...(cleared.source ? { source: cleared.source } : {}),
  });
  if (previous?.status) {
    await enqueueWake(tx, OPERATION_WORKFLOWS.remediation.workflowId(node.id), `${cleared.type} cleared`);
  }
  return updated;
}

/** Replaces the node's condition of that type, and its NoSchedule reason with the condition's status. */
async function writeCondition(tx: Tx, node: NodeRow, condition: Condition): Promise<NodeRow> {
  const reasonKey = conditionReason(condition.type);
  const reasons = node.noScheduleReasons.filter((r) => r !== reasonKey);
  const [updated] = await tx
    .update(nodes)
    .set({
      conditions: [...node.conditions.filter((c) => c.type !== condition.type), condition],
      noScheduleReasons: condition.status ? [...reasons, reasonKey] : reasons,
      version: node.version + 1,
      updatedAt: sql`now()`,
    })
    .where(eq(nodes.id, node.id))
    .returning();
  return updated!;
}

/**
 * The node's fault conditions (true, with their `condition:<type>` NoSchedule reason; not the
 * liveness sweep's `NodeUnreachable`) that no remediation has handled, oldest first: none of its
 * remediation operations was begun for that condition since it became true (a remediation records
 * the `since` it began for; one recorded before that counts when it began after `since`).
 */
export async function unhandledConditions(tx: Tx, node: NodeRow): Promise<Condition[]> {
  const open = node.conditions.filter(
    (c) => c.status && node.noScheduleReasons.includes(conditionReason(c.type)),
  );
  if (open.length === 0) return [];
  const remediations = await tx
    .select({
      condition: sql<string | null>`${operations.result}->>'condition'`,
      since: sql<string | null>`${operations.result}->>'since'`,
      createdAt: operations.createdAt,
    })
    .from(operations)
    .where(
      and(
        eq(operations.nodeId, node.id),
        eq(operations.kind, 'remediation'),
        inArray(
          sql`${operations.result}->>'condition'`,
          open.map((c) => c.type),
        ),
      ),
    );
  const handled = (c: Condition) =>
    remediations.some(
      (r) =>
        r.condition === c.type &&
        (r.since === null ? r.createdAt.getTime() >= Date.parse(c.since) : r.since === c.since),
    );
  return open.filter((c) => !handled(c)).sort((a, b) => Date.parse(a.since) - Date.parse(b.since));
}
