import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { OPERATION_KINDS, OPERATION_STATUSES, type CancellationRequest } from '../../domain/operation';
import { PENDING_PHASE, type Phase, type OperationProgress } from '../../domain/progress';
import { timestamps, tz } from './columns';

export const operations = pgTable(
  'operations',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: OPERATION_KINDS }).notNull(),
    nodeId: text('node_id'),
    poolId: text('pool_id'),
    status: text('status', { enum: OPERATION_STATUSES }).notNull(),
    workflowId: text('workflow_id').notNull(),
    actor: text('actor').notNull(),
    reason: text('reason'),
    /** The caller an Idempotency-Key belongs to (see `idempotencyScope`); set exactly with the key. */
    idempotencyScope: text('idempotency_scope'),
    idempotencyKey: text('idempotency_key'),
    requestHash: text('request_hash'),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<Record<string, unknown>>(),
    /** Who asked for the operation to be cancelled (DELETE /v1/operations/{id}), and how. */
    cancellation: jsonb('cancellation').$type<CancellationRequest>(),
    // What a reader needs of a running operation (domain/progress.ts), written by the request and
    // by each step in the transaction of the change it makes: never only in a workflow's memory.
    phase: text('phase').$type<Phase>().notNull().default(PENDING_PHASE),
    /** When a drain releases what is still live by force. */
    deadline: tz('deadline'),
    /** When its workflow looks again at the latest. */
    nextCheckAt: tz('next_check_at'),
    /** What it waits for, typed per kind (`waitingFor` of domain/progress.ts). */
    waitingFor: jsonb('waiting_for').$type<NonNullable<OperationProgress['waitingFor']>>(),
    /** The pool drain a node drain belongs to. */
    parentOperationId: text('parent_operation_id'),
    /** When a worker began it: `pending` until then. */
    startedAt: tz('started_at'),
    ...timestamps,
    completedAt: tz('completed_at'),
  },
  (t) => [
    // Keys are unique per caller: one caller's key never refuses or answers another's request.
    uniqueIndex('operations_scoped_idempotency_key_idx').on(t.idempotencyScope, t.idempotencyKey),
    check(
      'operations_idempotency_key_scoped',
      sql`(${t.idempotencyKey} is null) = (${t.idempotencyScope} is null)`,
    ),
    // At most one unfinished operation of each kind per node (docs/architecture.md, rules).
    uniqueIndex('operations_one_open_per_node_idx')
      .on(t.nodeId, t.kind)
      .where(sql`${t.status} in ('pending', 'running')`),
    index('operations_node_idx').on(t.nodeId, t.id),
    index('operations_pool_idx').on(t.poolId, t.id),
    index('operations_parent_idx')
      .on(t.parentOperationId)
      .where(sql`${t.parentOperationId} is not null`),
    // At most one unfinished pool drain per pool.
    uniqueIndex('operations_one_open_pool_drain_idx')
      .on(t.poolId)
      .where(sql`${t.kind} = 'pool-drain' and ${t.status} in ('pending', 'running')`),
  ],
);
