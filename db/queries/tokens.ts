import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { joinTokens, pools } from '../schema';

export type JoinTokenRow = typeof joinTokens.$inferSelect;

/** Pools whose tokens the principal manages: every pool for operators, its own tenant's for tenants. */
export async function managedPoolIds(db: DbOrTx, principal: Principal): Promise<string[] | 'all'> {
  if (principal.kind === 'operator') return 'all';
  if (principal.kind !== 'tenant') return [];
  const rows = await db.select({ id: pools.id }).from(pools).where(eq(pools.tenantId, principal.tenantId));
  return rows.map((r) => r.id);
}

/** SQL that is true for tokens of the managed pools. */
export function tokenManagedIn(managed: string[] | 'all'): SQL | undefined {
  return managed === 'all' ? undefined : inArray(joinTokens.poolId, managed.length ? managed : ['']);
}

export async function listTokens(db: DbOrTx, managed: string[] | 'all'): Promise<JoinTokenRow[]> {
  if (managed !== 'all' && managed.length === 0) return [];
  return db
    .select()
    .from(joinTokens)
    .where(managed === 'all' ? undefined : inArray(joinTokens.poolId, managed))
    .orderBy(asc(joinTokens.id));
}

/** The token, if it is one of the managed pools'. */
export async function findToken(
  db: DbOrTx,
  id: string,
  managed: string[] | 'all',
): Promise<JoinTokenRow | undefined> {
  const [token] = await db
    .select()
    .from(joinTokens)
    .where(and(eq(joinTokens.id, id), tokenManagedIn(managed)));
  return token;
}
