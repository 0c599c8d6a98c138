import { sql } from 'drizzle-orm';
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { ALLOCATION_KINDS } from '../../domain/operation';
import { tz } from './columns';
import { nodes } from './nodes';

export const allocations = pgTable(
  'allocations',
  {
    id: text('id').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    tenantId: text('tenant_id').notNull(),
    kind: text('kind', { enum: ALLOCATION_KINDS }).notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    endsAt: tz('ends_at'),
    releasedAt: tz('released_at'),
    releasedBy: text('released_by'),
  },
  // Open allocations are what drains and deletes ask about; history stays out of this index.
  (t) => [
    index('allocations_open_idx')
      .on(t.nodeId, t.endsAt)
      .where(sql`${t.releasedAt} is null`),
  ],
);
