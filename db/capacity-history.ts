import { and, isNotNull, lt, sql } from 'drizzle-orm';
import { capacityOf } from '../domain/capacity';
import type { Db } from './client';
import { CAPACITY_COLUMNS, COUNTED_IN_CAPACITY } from './queries/pools';
import { capacityHistory, nodes } from './schema';

/**
 * Records every pool's capacity for the minute of `at` (its start), once: a second call in the
 * same minute, from this process or another worker's sweep, writes nothing. Minutes older than
 * `keepDays` go at the same time. Returns how many pools were recorded.
 */
export async function recordCapacity(db: Db, at: Date, keepDays: number): Promise<number> {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  return db.transaction(async (tx) => {
    const live = await tx
      .select({ poolId: sql<string>`${nodes.poolId}`, ...CAPACITY_COLUMNS })
      .from(nodes)
      .where(and(COUNTED_IN_CAPACITY, isNotNull(nodes.poolId)));
    const byPool = Map.groupBy(live, (node) => node.poolId);
    await tx
      .delete(capacityHistory)
      .where(lt(capacityHistory.at, new Date(minute.getTime() - keepDays * 86_400_000)));
    if (byPool.size === 0) return 0;
    const written = await tx
      .insert(capacityHistory)
      .values(
        [...byPool].map(([poolId, members]) => ({
          poolId,
          at: minute,
          total: members.length,
          ...capacityOf(members),
        })),
      )
      .onConflictDoNothing()
      .returning({ poolId: capacityHistory.poolId });
    return written.length;
  });
}
