import { bigint, index, pgTable, text } from 'drizzle-orm/pg-core';
import { timestamps } from './columns';
import { nodes } from './nodes';

/** A node's accelerators, from the inventory its agent reports at join. */
export const accelerators = pgTable(
  'accelerators',
  {
    id: text('id').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    model: text('model').notNull(),
    serial: text('serial').notNull(),
    state: text('state', { enum: ['active', 'decommissioned'] })
      .notNull()
      .default('active'),
    ...timestamps,
  },
  (t) => [index('accelerators_node_idx').on(t.nodeId)],
);

/** A node's storage roots, from its inventory. */
export const storageRoots = pgTable(
  'storage_roots',
  {
    id: text('id').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    path: text('path').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    state: text('state', { enum: ['writable', 'read_only', 'unavailable'] })
      .notNull()
      .default('writable'),
    ...timestamps,
  },
  (t) => [index('storage_roots_node_idx').on(t.nodeId)],
);
