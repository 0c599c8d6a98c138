import { eq, and, asc } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { disruptions } from '../schema';

/** The nodes whose drains wait for a slot of the pool's disruption budget. */
export async function waitingDrains(db: DbOrTx, poolId: string): Promise<string[]> {
  const rows = await db
    .select({ nodeId: disruptions.nodeId })
    .from(disruptions)
    .where(and(eq(disruptions.poolId, poolId), eq(disruptions.state, 'waiting')))
    .orderBy(asc(disruptions.since));
  return rows.map((r) => r.nodeId);
}
