import { bigint, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/** Inventory as reported, one row per report: history, kept forever. */
export const inventorySnapshots = pgTable(
  'inventory_snapshots',
  {
    id: text('id').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    takenAt: tz('taken_at').notNull().defaultNow(),
  },
  (t) => [index('inventory_snapshots_node_idx').on(t.nodeId, t.takenAt)],
);

/**
 * How much history each node has, kept by triggers as rows are inserted, so that a decommission
 * preview reports retained history without counting it (its cost follows live dependencies only).
 */
export const nodeHistoryCounts = pgTable('node_history_counts', {
  nodeId: text('node_id')
    .primaryKey()
    .references(() => nodes.id),
  events: bigint('events', { mode: 'number' }).notNull().default(0),
  allocations: bigint('allocations', { mode: 'number' }).notNull().default(0),
  operations: bigint('operations', { mode: 'number' }).notNull().default(0),
  inventorySnapshots: bigint('inventory_snapshots', { mode: 'number' }).notNull().default(0),
});
