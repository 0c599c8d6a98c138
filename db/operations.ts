import { and, eq, inArray, sql } from 'drizzle-orm';
import type { OperationKind, OperationStatus } from '../domain/operation';
import { DrydockError } from '../domain/errors';
import type { DbOrTx, Tx } from './client';
import { isUniqueViolation } from './errors';
import { operations } from './schema';

export type OperationRow = typeof operations.$inferSelect;

/** The operation record of the API (docs/concepts.md). */
export function operationView(op: OperationRow) {
  return {
    id: op.id,
    kind: op.kind,
    nodeId: op.nodeId,
    poolId: op.poolId,
    status: op.status,
    workflowId: op.workflowId,
    actor: op.actor,
    reason: op.reason,
    idempotencyKey: op.idempotencyKey,
    result: op.result,
    error: op.error,
    createdAt: op.createdAt.toISOString(),
    updatedAt: op.updatedAt.toISOString(),
    completedAt: op.completedAt?.toISOString() ?? null,
  };
}
export type OperationView = ReturnType<typeof operationView>;

/** The unfinished operation of this kind on the node, if one exists (at most one can). */
export async function openOperation(
  tx: DbOrTx,
  nodeId: string,
  kind: OperationKind,
): Promise<OperationRow | undefined> {
  const [op] = await tx
    .select()
    .from(operations)
    .where(
      and(
        eq(operations.nodeId, nodeId),
        eq(operations.kind, kind),
        inArray(operations.status, ['pending', 'running']),
      ),
    );
  return op;
}

/**
 * What a caller's Idempotency-Key already stands for: the operation it made for this very request
 * (a retry gets it back), nothing when the caller never used the key, or IDEMPOTENCY_KEY_REUSED when
 * the caller used it for another request. Keys of other callers are never looked at.
 */
export async function operationOfKey(
  db: DbOrTx,
  request: { idempotencyScope: string | null; idempotencyKey: string | null; requestHash: string | null },
): Promise<OperationRow | undefined> {
  const { idempotencyScope: scope, idempotencyKey: key } = request;
  if (!scope || !key) return undefined;
  const [op] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.idempotencyScope, scope), eq(operations.idempotencyKey, key)));
  if (op && op.requestHash !== request.requestHash) throw keyReused();
  return op;
}

function keyReused(): DrydockError {
  return new DrydockError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request');
}

/** Moves an unfinished operation to a final status; a finished one is left as it is. */
export async function finishOperation(
  tx: Tx,
  id: string,
  status: Extract<OperationStatus, 'succeeded' | 'failed' | 'cancelled'>,
  outcome: { result?: Record<string, unknown>; error?: Record<string, unknown> } = {},
): Promise<OperationRow | undefined> {
  const [op] = await tx
    .update(operations)
    .set({ status, ...outcome, updatedAt: sql`now()`, completedAt: sql`now()` })
    .where(and(eq(operations.id, id), inArray(operations.status, ['pending', 'running'])))
    .returning();
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

export async function findOperation(db: DbOrTx, id: string): Promise<OperationRow | undefined> {
  const [op] = await db.select().from(operations).where(eq(operations.id, id));
  return op;
}

/** The answer of a begin that finds the operation it created on an earlier run of itself. */
export function ownBegin<N>(operation: OperationRow, node: N) {
  return { operation: operationView(operation), node, created: true };
}
