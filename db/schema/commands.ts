import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { COMMAND_KINDS, COMMAND_STATUSES } from '../../domain/command-status';
import { tz } from './columns';
import { nodes } from './nodes';

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
    // What a `run` command carries (docs/lifecycle/commands.md); null for the other kinds.
    /** Who asked (an actor, as events name it), and why. */
    requestedBy: text('requested_by'),
    reason: text('reason'),
    /** The values of the action's declared parameters. */
    args: jsonb('args').$type<Record<string, string>>(),
    /** Not delivered after this: it ends `expired`. */
    expiresAt: tz('expires_at'),
    startedAt: tz('started_at'),
    exitCode: integer('exit_code'),
    stdout: text('stdout'),
    stderr: text('stderr'),
    /** Bytes of output the agent did not keep (over the action's output limit). */
    outputDropped: bigint('output_dropped', { mode: 'number' }),
    /** The caller an Idempotency-Key belongs to, the key, and the hash of the request it binds. */
    idempotencyScope: text('idempotency_scope'),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
  },
  (t) => [
    index('node_commands_pending_idx')
      .on(t.nodeId, t.createdAt)
      .where(sql`${t.status} = 'pending'`),
    index('node_commands_node_idx').on(t.nodeId, t.id),
    index('node_commands_expiring_idx')
      .on(t.expiresAt)
      .where(sql`${t.status} = 'pending' and ${t.expiresAt} is not null`),
    uniqueIndex('node_commands_scoped_idempotency_key_idx').on(t.idempotencyScope, t.idempotencyKey),
    check(
      'node_commands_idempotency_key_scoped',
      sql`(${t.idempotencyKey} is null) = (${t.idempotencyScope} is null)`,
    ),
  ],
);
