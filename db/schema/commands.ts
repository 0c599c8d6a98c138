import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { COMMAND_STATUSES } from '../../domain/command-status';
import { tz } from './columns';
import { nodes } from './nodes';

export const COMMAND_KINDS = ['purge', 'remediate'] as const;

/** Commands queued for a node's agent, delivered oldest first on its command stream. */
export const nodeCommands = pgTable(
  'node_commands',
  {
    id: text('id').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    kind: text('kind', { enum: COMMAND_KINDS }).notNull(),
    action: text('action'),
    payload: text('payload'),
    signature: text('signature'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
    operationId: text('operation_id'),
    status: text('status', { enum: COMMAND_STATUSES }).notNull().default('pending'),
    createdAt: tz('created_at').notNull().defaultNow(),
    finishedAt: tz('finished_at'),
    refuseReason: text('refuse_reason'),
  },
  (t) => [
    index('node_commands_pending_idx')
      .on(t.nodeId, t.createdAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);
