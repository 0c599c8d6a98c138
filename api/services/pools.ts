import { eq, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { mergePatch, patchBetween, type PoolSettings } from '../../domain/pool';
import { actorOf, type Principal } from '../../domain/principal';
import type { Db } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import { wakeBudgetWaiters } from '../../db/disruptions';
import { appendEvent } from '../../db/events';
import { checkVersion } from '../../db/nodes';
import type { PoolRow } from '../../db/queries/pools';
import { pools } from '../../db/schema';
import { checkedPolicy } from '../pool-schemas';

/** Creates a pool; CONFLICT when its id is taken. */
export async function createPool(
  db: Db,
  values: Pick<PoolRow, 'id' | 'kind' | 'siteId' | 'tenantId' | 'grants' | 'policy'>,
): Promise<PoolRow> {
  try {
    const [pool] = await db.insert(pools).values(values).returning();
    return pool!;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DrydockError('CONFLICT', `pool ${values.id} already exists`);
    throw error;
  }
}

export interface PoolUpdate {
  id: string;
  principal: Principal;
  /** The version the caller read (If-Match); none: whatever the pool is now. */
  version?: number;
  /** A JSON merge patch of the grants and policy, each field checked by its schema. */
  patch: { grants?: string[]; policy?: Record<string, unknown> };
  reason: string | null;
}

/**
 * Changes a pool's grants and policy in one transaction: the pool row locked, its version
 * checked, the patch merged and the policy it leaves checked whole, then the change (version + 1)
 * and `pool.updated` with what changed — or nothing at all when nothing differs. A change of
 * `maxUnavailable` wakes the drains waiting for the pool's budget in the same transaction (a
 * larger one may have room for them now): under the pool's lock, so none is missed.
 */
export async function updatePool(db: Db, input: PoolUpdate): Promise<PoolRow> {
  return db.transaction(async (tx) => {
    const [before] = await tx.select().from(pools).where(eq(pools.id, input.id)).for('update');
    if (!before) throw new DrydockError('NOT_FOUND', `pool ${input.id} not found`, { poolId: input.id });
    checkVersion(before, input.version, 'pool');
    const current: PoolSettings = { grants: before.grants, policy: before.policy };
    const merged = mergePatch(current, input.patch) as PoolSettings;
    const next: PoolSettings = { grants: merged.grants, policy: checkedPolicy(merged.policy) };
    const after = patchBetween(current, next);
    if (Object.keys(after).length === 0) return before;
    const [updated] = await tx
      .update(pools)
      .set({ ...next, version: before.version + 1, updatedAt: sql`now()` })
      .where(eq(pools.id, before.id))
      .returning();
    await appendEvent(tx, {
      type: 'pool.updated',
      tenantId: before.tenantId,
      actor: actorOf(input.principal),
      reason: input.reason,
      data: { poolId: before.id, version: updated!.version, before: patchBetween(next, current), after },
    });
    if ('maxUnavailable' in ((after.policy ?? {}) as object)) await wakeBudgetWaiters(tx, before.id);
    return updated!;
  });
}
