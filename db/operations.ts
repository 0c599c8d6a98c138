import { and, eq, inArray, or, sql } from 'drizzle-orm';
import { DrydockError } from '../domain/errors';
import { OPERATION_KINDS, type CancellationRequest } from '../domain/operation';
import { OPEN_OPERATION_STATUSES, type FinalOperationStatus } from '../domain/operation-status';
import { finalPhase, type OperationProgress, type Phase } from '../domain/progress';
import type { DbOrTx, Tx } from './client';
import { isUniqueViolation } from './errors';
import { enqueueWake } from './outbox';
import { keyReused, type OperationRow } from './queries/operations';
import { operations } from './schema';

// The reads live in queries/operations.ts (routes may import those); re-exported for the writers.
export {
  findOperation,
  openOperation,
  operationOfKey,
  operationView,
  type OperationRow,
  type OperationView,
} from './queries/operations';

/**
 * Moves an unfinished operation to a final status, and its phase to the one its kind ends in with
 * it (`finalPhase`); a finished one is left as it is. `waitingFor`: what it last waited for, when
 * the caller knows it better than the record.
 */
export async function finishOperation(
  tx: Tx,
  id: string,
  status: FinalOperationStatus,
  outcome: {
    result?: Record<string, unknown>;
    error?: Record<string, unknown>;
    waitingFor?: NonNullable<OperationProgress['waitingFor']>;
    cancellation?: CancellationRequest;
  } = {},
): Promise<OperationRow | undefined> {
  const [op] = await tx
    .update(operations)
    .set({
      status,
      ...outcome,
      phase: finalPhaseOf(status),
      nextCheckAt: null,
      updatedAt: sql`now()`,
      completedAt: sql`now()`,
    })
    .where(and(eq(operations.id, id), inArray(operations.status, OPEN_OPERATION_STATUSES)))
    .returning();
  // It ended: what follows it looks again (a pool drain may start the next node, a maintenance go on).
  if (op) await wakeFollowersOf(tx, op, `${op.kind} ${op.id} ended`);
  return op;
}

/**
 * Wakes the open operations that follow `op`, through the outbox, in the caller's transaction: the
 * one that requested it (`parentOperationId`: a pool drain's node drain, a maintenance's drain, a
 * rolling maintenance's node maintenance) and, for a node drain, the pool drain of its pool that
 * joined it (`result.joined`). Called when `op` ended, and when a node drain started or stopped
 * waiting for the pool's disruption budget. Those followers look only when woken.
 */
export async function wakeFollowersOf(
  tx: Tx,
  op: Pick<OperationRow, 'id' | 'kind' | 'poolId' | 'parentOperationId'>,
  why: string,
): Promise<void> {
  const follows = [
    ...(op.parentOperationId ? [eq(operations.id, op.parentOperationId)] : []),
    ...(op.kind === 'drain' && op.poolId
      ? [
          and(
            eq(operations.kind, 'pool-drain'),
            eq(operations.poolId, op.poolId),
            sql`${operations.result} -> 'joined' @> ${JSON.stringify([op.id])}::jsonb`,
          ),
        ]
      : []),
  ];
  if (follows.length === 0) return;
  const followers = await tx
    .select({ workflowId: operations.workflowId })
    .from(operations)
    .where(and(inArray(operations.status, OPEN_OPERATION_STATUSES), or(...follows)));
  for (const { workflowId } of followers) await enqueueWake(tx, workflowId, why);
}

/** `finalPhase` of the row's own kind, as SQL. */
function finalPhaseOf(status: FinalOperationStatus) {
  const cases = OPERATION_KINDS.map((kind) => `when '${kind}' then '${finalPhase(kind, status)}'`);
  return sql<Phase>`case ${operations.kind} ${sql.raw(cases.join(' '))} end`;
}

/**
 * A step's report of where its running operation stands, in the step's transaction: its phase,
 * what it waits for, when it looks next. Only a running operation moves; the row as it now is.
 */
export async function recordProgress(
  tx: Tx,
  id: string,
  progress: {
    phase: Phase;
    waitingFor?: NonNullable<OperationProgress['waitingFor']> | null;
    nextCheckAt?: Date | null;
  },
): Promise<OperationRow | undefined> {
  const [op] = await tx
    .update(operations)
    .set({ ...progress, updatedAt: sql`now()` })
    .where(and(eq(operations.id, id), eq(operations.status, 'running')))
    .returning();
  return op;
}

/** The operation a step works on: NOT_FOUND (a refusal no retry fixes) when there is none. */
export async function operationOf(db: DbOrTx, id: string): Promise<OperationRow> {
  const [op] = await db.select().from(operations).where(eq(operations.id, id));
  if (!op) throw new DrydockError('NOT_FOUND', `operation ${id} not found`, { operationId: id });
  return op;
}

/** Records a new operation; a caller's reused `Idempotency-Key` is refused by the unique index. */
export async function insertOperation(tx: Tx, values: typeof operations.$inferInsert): Promise<OperationRow> {
  try {
    const [op] = await tx.insert(operations).values(values).returning();
    return op!;
  } catch (error) {
    if (isUniqueViolation(error, 'operations_scoped_idempotency_key_idx')) {
      throw keyReused();
    }
    throw error;
  }
}
