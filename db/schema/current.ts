import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/** The scheduler's current entry for a placeable node (one row per adopted node). */
export const schedulerEntries = pgTable('scheduler_entries', {
  nodeId: text('node_id')
    .primaryKey()
    .references(() => nodes.id),
  poolId: text('pool_id'),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

/** The node's current telemetry (last heartbeat flush); history is not kept here. */
export const telemetryCurrent = pgTable('telemetry_current', {
  nodeId: text('node_id')
    .primaryKey()
    .references(() => nodes.id),
  lastHeartbeatAt: tz('last_heartbeat_at'),
  data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

/** The node's current inventory (the newest snapshot's content). */
export const inventoryCurrent = pgTable('inventory_current', {
  nodeId: text('node_id')
    .primaryKey()
    .references(() => nodes.id),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});
