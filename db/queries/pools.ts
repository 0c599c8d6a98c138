import { and, asc, eq, isNull, notInArray, or, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { PROVISION_STATES, isTerminal } from '../../domain/provision';
import { requireOwner, type Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { nodes, pools } from '../schema';

export type PoolRow = typeof pools.$inferSelect;

function poolVisibleTo(principal: Principal) {
  if (principal.kind === 'operator') return sql`true`;
  if (principal.kind === 'node') return sql`false`;
  return or(eq(pools.tenantId, principal.tenantId), sql`${principal.tenantId} = any(${pools.grants})`)!;
}

/** The pool as the principal sees it (its own tenant's, or granted), or NOT_FOUND. */
export async function getVisiblePool(db: DbOrTx, id: string, principal: Principal): Promise<PoolRow> {
  const [pool] = await db
    .select()
    .from(pools)
    .where(and(eq(pools.id, id), poolVisibleTo(principal)));
  if (!pool) throw new DrydockError('NOT_FOUND', `pool ${id} not found`, { poolId: id });
  return pool;
}

/**
 * The pool the principal may operate (pool drains, join tokens), or NOT_FOUND when it cannot see
 * it, or FORBIDDEN when it sees it only through a grant (`requireOwner`).
 */
export async function getOperablePool(db: DbOrTx, id: string, principal: Principal): Promise<PoolRow> {
  const pool = await getVisiblePool(db, id, principal);
  requireOwner(principal, { tenantId: pool.tenantId, poolId: pool.id }, `pool ${id}`);
  return pool;
}

/** The pools the principal sees, by id. */
export async function listPools(db: DbOrTx, principal: Principal): Promise<PoolRow[]> {
  return db.select().from(pools).where(poolVisibleTo(principal)).orderBy(asc(pools.id));
}

export async function findPool(db: DbOrTx, id: string): Promise<PoolRow | undefined> {
  const [pool] = await db.select().from(pools).where(eq(pools.id, id));
  return pool;
}

/** What capacity counting reads of a node (domain/capacity.ts). */
export const CAPACITY_COLUMNS = {
  maintenance: nodes.maintenance,
  liveness: nodes.liveness,
  cordoned: nodes.cordoned,
  noScheduleReasons: nodes.noScheduleReasons,
};

/**
 * The nodes capacity counts: the live ones — not deleted, and not out of service for good (a
 * decommissioned node is no capacity lost for a while: counted, it would be unreachable forever).
 */
export const COUNTED_IN_CAPACITY = and(
  isNull(nodes.deletedAt),
  notInArray(nodes.provisionState, PROVISION_STATES.filter(isTerminal)),
)!;

/** The live nodes of a pool, as much of them as capacity counting reads. */
export async function capacityRowsOf(db: DbOrTx, poolId: string) {
  return db
    .select(CAPACITY_COLUMNS)
    .from(nodes)
    .where(and(eq(nodes.poolId, poolId), COUNTED_IN_CAPACITY));
}
