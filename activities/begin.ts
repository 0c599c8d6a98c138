import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { operationOf, type OperationRow } from '../db/operations';
import { operations } from '../db/schema';
import type { Phase } from '../domain/progress';

/**
 * A workflow's first step begins the operation it was started for, in the step's transaction:
 * `pending` → `running`, `startedAt` now, its first working phase. Run again (a retried step, a
 * run that continued as new) it finds the operation running and leaves it. The operation as it now
 * is: one that ended before any worker took it (a DELETE, an uncordon) is answered as it ended.
 */
export async function beginOperationRun(tx: Tx, operationId: string, phase: Phase): Promise<OperationRow> {
  const [begun] = await tx
    .update(operations)
    .set({ status: 'running', phase, startedAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(operations.id, operationId), eq(operations.status, 'pending')))
    .returning();
  return begun ?? operationOf(tx, operationId);
}
