import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';
import { pools } from './pools';

export const DISRUPTION_STATES = ['waiting', 'holding'] as const;
export type DisruptionState = (typeof DISRUPTION_STATES)[number];

/**
 * A pool's disruption budget, one row per node that takes (or waits for) a slot of it.
 * `holding`: the node counts against its pool's `maxUnavailable` — its drain is force-releasing
 * its allocations, or it is drained and still cordoned. `waiting`: a drain past its deadline
 * wants a slot and is woken when one frees. Rows are written with the pool row locked.
 */
export const disruptions = pgTable(
  'disruptions',
  {
    nodeId: text('node_id')
      .primaryKey()
      .references(() => nodes.id),
    poolId: text('pool_id')
      .notNull()
      .references(() => pools.id),
    /** The drain operation that took or waits for the slot. */
    operationId: text('operation_id').notNull(),
    state: text('state', { enum: DISRUPTION_STATES }).notNull(),
    since: tz('since').notNull().defaultNow(),
  },
  (t) => [index('disruptions_pool_idx').on(t.poolId, t.state)],
);
