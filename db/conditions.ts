import { eq, sql } from 'drizzle-orm';
import { assertControllable } from '../domain/controls';
import type { Condition } from '../domain/node';
import { conditionReason } from '../domain/remediation';
import type { Db } from './client';
import { lockNode, type NodeRow } from './nodes';
import { nodes } from './schema';

/**
 * An agent's condition report, in one transaction: the condition on the node, and its
 * `condition:<type>` NoSchedule reason while it is true. A report that changes nothing is a no-op.
 */
export async function reportCondition(
  db: Db,
  nodeId: string,
  report: { type: string; status: boolean; reason: string | null },
): Promise<{ node: NodeRow; becameTrue: boolean; cleared: boolean }> {
  return db.transaction(async (tx) => {
    const node = await lockNode(tx, nodeId);
    assertControllable(node);
    const previous = node.conditions.find((c) => c.type === report.type);
    const wasTrue = previous?.status === true;
    const reasonKey = conditionReason(report.type);
    const sameReason = (previous?.reason ?? null) === report.reason;
    if (previous && previous.status === report.status && sameReason) {
      return { node, becameTrue: false, cleared: false };
    }
    const condition: Condition = {
      type: report.type,
      status: report.status,
      reason: report.reason,
      since: wasTrue === report.status && previous ? previous.since : new Date().toISOString(),
    };
    const reasons = node.noScheduleReasons.filter((r) => r !== reasonKey);
    const [updated] = await tx
      .update(nodes)
      .set({
        conditions: [...node.conditions.filter((c) => c.type !== report.type), condition],
        noScheduleReasons: report.status ? [...reasons, reasonKey] : reasons,
        version: node.version + 1,
        updatedAt: sql`now()`,
      })
      .where(eq(nodes.id, node.id))
      .returning();
    return { node: updated!, becameTrue: report.status && !wasTrue, cleared: !report.status && wasTrue };
  });
}
