import { and, eq, sql } from 'drizzle-orm';
import {
  downChange,
  downConditionOf,
  sameReport,
  type DownReport,
  type SchedulerReport,
} from '../domain/scheduler-view';
import type { Tx } from './client';
import { appendEvent } from './events';
import type { NodeRow } from './nodes';
import { reportOf, schedulerViewsOf, type SchedulerViewRow } from './queries/scheduler-views';
import { schedulerViews } from './schema';

/**
 * Records what `source` reports of the locked node, in the caller's transaction. The same report
 * again moves only its `observedAt`; another one is stored with `node.scheduler.changed` (what it
 * says now, and what it said before). `down`: what the report does to the node's down condition
 * (`SchedulerNodeDown`, `SchedulerNodeNotReady` for Kubernetes: `downConditionOf`, `downChange`),
 * for the caller to report as an agent's condition is reported; null when nothing.
 */
export async function recordSchedulerView(
  tx: Tx,
  node: NodeRow,
  source: string,
  report: SchedulerReport,
  actor: string,
): Promise<{ view: SchedulerViewRow; down: DownReport | null }> {
  const views = await schedulerViewsOf(tx, node.id);
  const previous = views.find((v) => v.source === source);
  if (previous && sameReport(reportOf(previous), report)) {
    const [seen] = await tx
      .update(schedulerViews)
      .set({ observedAt: sql`now()` })
      .where(and(eq(schedulerViews.nodeId, node.id), eq(schedulerViews.source, source)))
      .returning();
    return { view: seen!, down: null };
  }
  const stamps = { observedAt: sql`now()`, changedAt: sql`now()` };
  const [view] = await tx
    .insert(schedulerViews)
    .values({ nodeId: node.id, source, ...report })
    .onConflictDoUpdate({
      target: [schedulerViews.nodeId, schedulerViews.source],
      set: { ...report, ...stamps },
    })
    .returning();
  const was = previous ? reportOf(previous) : null;
  await appendEvent(tx, {
    nodeId: node.id,
    tenantId: node.tenantId,
    type: 'node.scheduler.changed',
    actor,
    data: { source, view: report, was },
  });
  const others = views
    .filter((v) => v.source !== source)
    .map((v) => ({ source: v.source, report: reportOf(v) }));
  const condition = downConditionOf(source);
  const downNow = node.conditions.some((c) => c.type === condition && c.status);
  return { view: view!, down: downChange(source, was, report, others, downNow) };
}
