import { and, count, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { allocations } from '../schema';

/** SQL true for allocations that still hold their node: not released, not past their end. */
export const isOpen = and(
  isNull(allocations.releasedAt),
  or(isNull(allocations.endsAt), gt(allocations.endsAt, sql`now()`)),
)!;

export async function countOpenAllocations(db: DbOrTx, nodeId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(allocations)
    .where(and(eq(allocations.nodeId, nodeId), isOpen));
  return row?.n ?? 0;
}
