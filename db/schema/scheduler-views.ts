import { boolean, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/**
 * What each scheduler that places work on a node says of it, as its bridge last reported it
 * (`PUT /v1/nodes/{id}/schedulers/{source}`): one row per node and scheduler.
 */
export const schedulerViews = pgTable(
  'scheduler_views',
  {
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    /** The scheduler: `<scheduler>:<cluster>`, as observed allocations name it. */
    source: text('source').notNull(),
    name: text('name').notNull(),
    state: text('state').notNull(),
    reason: text('reason'),
    cordoned: boolean('cordoned').notNull(),
    cordonedByDrydock: boolean('cordoned_by_drydock').notNull(),
    down: boolean('down').notNull(),
    disagreement: text('disagreement'),
    /** When its bridge last reported it, changed or not. */
    observedAt: tz('observed_at').notNull().defaultNow(),
    /** When its bridge last reported it otherwise than before. */
    changedAt: tz('changed_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.source] })],
);
