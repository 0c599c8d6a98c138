import { and, eq, inArray, sql } from 'drizzle-orm';
import { OPEN_OPERATION_STATUSES, type FinalOperationStatus } from '../domain/operation-status';
import type { Tx } from './client';
import { isUniqueViolation } from './errors';
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

/** Moves an unfinished operation to a final status; a finished one is left as it is. */
export async function finishOperation(
  tx: Tx,
  id: string,
  status: FinalOperationStatus,
  outcome: { result?: Record<string, unknown>; error?: Record<string, unknown> } = {},
): Promise<OperationRow | undefined> {
  const [op] = await tx
    .update(operations)
    .set({ status, ...outcome, updatedAt: sql`now()`, completedAt: sql`now()` })
    .where(and(eq(operations.id, id), inArray(operations.status, OPEN_OPERATION_STATUSES)))
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
