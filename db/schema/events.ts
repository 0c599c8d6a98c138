import { bigserial, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/** The audit log and the event feed at once: appended in the transaction of the change. */
export const events = pgTable(
  'events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    nodeId: text('node_id'),
    tenantId: text('tenant_id'),
    type: text('type').notNull(),
    actor: text('actor').notNull(),
    reason: text('reason'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    operationId: text('operation_id'),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  // By actor: the audit's filter (GET /v1/audit?actor=), newest first or after a cursor, without
  // scanning the whole log for someone who did little.
  (t) => [index('events_node_idx').on(t.nodeId, t.id), index('events_actor_idx').on(t.actor, t.id)],
);
