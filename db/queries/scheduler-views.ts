import { asc, eq } from 'drizzle-orm';
import type { SchedulerReport } from '../../domain/scheduler-view';
import type { DbOrTx } from '../client';
import { schedulerViews } from '../schema';

export type SchedulerViewRow = typeof schedulerViews.$inferSelect;

/** What a scheduler says of a node, as the API shows it (docs/api.md). */
export function schedulerViewOf(row: SchedulerViewRow) {
  return {
    source: row.source,
    ...reportOf(row),
    observedAt: row.observedAt.toISOString(),
    changedAt: row.changedAt.toISOString(),
  };
}
export type SchedulerView = ReturnType<typeof schedulerViewOf>;

/** The report a row holds, without its times. */
export function reportOf(row: SchedulerViewRow): SchedulerReport {
  return {
    name: row.name,
    state: row.state,
    reason: row.reason,
    cordoned: row.cordoned,
    cordonedByDrydock: row.cordonedByDrydock,
    down: row.down,
    disagreement: row.disagreement,
  };
}

/** Every scheduler's view of the node, by source. */
export async function schedulerViewsOf(db: DbOrTx, nodeId: string): Promise<SchedulerViewRow[]> {
  return db
    .select()
    .from(schedulerViews)
    .where(eq(schedulerViews.nodeId, nodeId))
    .orderBy(asc(schedulerViews.source))
    .prepare('scheduler_views_of')
    .execute();
}
