import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { ENDING_ACTIONS } from '../../domain/observed';
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
    /** Observed allocations: the scheduler that placed the work (`slurm:<cluster>`); null: placed here. */
    source: text('source'),
    /** The scheduler's own id of the work (a job id, a pod's namespace/name/uid). */
    externalId: text('external_id'),
    /** Observed: when a drain's deadline asked its scheduler to end it; it is released once gone. */
    endRequestedAt: tz('end_requested_at'),
    /**
     * Observed, asked to end (politely while its node drains, or at the deadline): how its scheduler
     * ends it, what it answered, and when (its bridge says). Plain text: a new action needs no migration.
     */
    endAction: text('end_action', { enum: ENDING_ACTIONS }),
    endAnswer: text('end_answer'),
    endingAt: tz('ending_at'),
  },
  // Open allocations are what drains and deletes ask about; history stays out of this index.
  (t) => [
    index('allocations_open_idx')
      .on(t.nodeId, t.endsAt)
      .where(sql`${t.releasedAt} is null`),
    // One live allocation per piece of a scheduler's work: recording it again finds this one.
    uniqueIndex('allocations_source_live_idx')
      .on(t.source, t.externalId)
      .where(sql`${t.releasedAt} is null and ${t.source} is not null`),
  ],
);
