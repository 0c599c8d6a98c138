import { and, eq, inArray, sql } from 'drizzle-orm';
import { assertControllable } from '../domain/controls';
import type { Condition } from '../domain/node';
import { conditionReason } from '../domain/remediation';
import type { Tx } from './client';
import { appendEvent } from './events';
import { lockNode, type NodeRow } from './nodes';
import { nodes, operations } from './schema';

/**
 * An agent's condition report, in the caller's transaction: the condition on the node, and its
 * `condition:<type>` NoSchedule reason while it is true. A report that changes nothing is a no-op.
 * `unhandled`: the condition is true and no remediation has been requested for it since it became
 * true. `cleared`: it was true and no longer is.
 */
export async function reportCondition(
  tx: Tx,
  nodeId: string,
  report: { type: string; status: boolean; reason: string | null },
): Promise<{ node: NodeRow; unhandled: boolean; cleared: boolean }> {
  {
    const node = await lockNode(tx, nodeId);
    assertControllable(node);
    const previous = node.conditions.find((c) => c.type === report.type);
    const wasTrue = previous?.status === true;
    const sameReason = (previous?.reason ?? null) === report.reason;
    const unchanged = previous && previous.status === report.status && sameReason && !previous.source;
    const updated = unchanged
      ? node
      : await writeCondition(tx, node, {
          type: report.type,
          status: report.status,
          reason: report.reason,
          since: wasTrue === report.status && previous ? previous.since : new Date().toISOString(),
        });
    const unhandled =
      report.status && (await unhandledConditions(tx, updated)).some((c) => c.type === report.type);
    return { node: updated, unhandled, cleared: !report.status && wasTrue };
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
