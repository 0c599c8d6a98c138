import { index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/**
 * A pool's capacity once a minute: its live nodes counted per capacity bucket (domain/capacity.ts)
 * at the start of that minute, for capacity over time (GET /v1/pools/{id}/capacity/history).
 * Written by the liveness sweep, kept for DRYDOCK_CAPACITY_HISTORY_DAYS.
 */
export const capacityHistory = pgTable(
  'capacity_history',
  {
    poolId: text('pool_id').notNull(),
    at: tz('at').notNull(),
    total: integer('total').notNull(),
    schedulable: integer('schedulable').notNull(),
    cordoned: integer('cordoned').notNull(),
    unhealthy: integer('unhealthy').notNull(),
    maintenance: integer('maintenance').notNull(),
    unreachable: integer('unreachable').notNull(),
  },
  // By time as well: the retention's delete of every pool's oldest minutes.
  (t) => [primaryKey({ columns: [t.poolId, t.at] }), index('capacity_history_at_idx').on(t.at)],
);
