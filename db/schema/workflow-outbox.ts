import { sql } from 'drizzle-orm';
import { bigserial, check, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/**
 * What Temporal must be told, written in the transaction of the change that asks for it (the
 * transactional outbox): start the workflow of a recorded operation, or signal a workflow to look
 * at its record again. The dispatcher in each worker delivers the rows and deletes
 * them (dispatch/dispatcher.ts); a Temporal outage only delays them.
 */
export const workflowOutbox = pgTable(
  'workflow_outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workflowId: text('workflow_id').notNull(),
    action: text('action', { enum: ['start', 'signal'] }).notNull(),
    /** start: the operation. */
    operationId: text('operation_id'),
    /** signal: its name; its argument says why (`reason`). */
    signal: text('signal'),
    reason: text('reason'),
    /** The request that caused it: its id follows it into the workflow (observability/). */
    requestId: text('request_id'),
    /** The request's W3C `traceparent` when tracing is on: the workflow's spans join its trace. */
    traceparent: text('traceparent'),
    createdAt: tz('created_at').notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: tz('next_attempt_at').notNull().defaultNow(),
    lastError: text('last_error'),
  },
  (t) => [
    index('workflow_outbox_due_idx').on(t.nextAttemptAt, t.id),
    index('workflow_outbox_operation_idx')
      .on(t.operationId)
      .where(sql`${t.operationId} is not null`),
    check(
      'workflow_outbox_action_fields',
      sql`case ${t.action} when 'signal' then ${t.signal} is not null else ${t.operationId} is not null end`,
    ),
  ],
);
