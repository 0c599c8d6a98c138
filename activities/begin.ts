import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { findOperation, type OperationRow } from '../db/operations';
import { operations } from '../db/schema';
import type { Phase } from '../domain/progress';

/**
 * A workflow begins the operation it was started for, in one transaction: `pending` → `running`,
 * `startedAt` now, its first working phase. Run again (a retried task, a run that continued as new)
 * it finds the operation running and answers it as it is. Null when the operation already ended (a
 * DELETE or a superseding request before any worker took it): the workflow has nothing to do.
 */
export async function beginOperationRun(
  db: Db,
  operationId: string,
  phase: Phase,
): Promise<OperationRow | null> {
  const [begun] = await db
    .update(operations)
    .set({ status: 'running', phase, startedAt: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(operations.id, operationId), eq(operations.status, 'pending')))
    .returning();
  if (begun) return begun;
  const op = await findOperation(db, operationId);
  return op?.status === 'running' ? op : null;
}
