import { and, asc, count, eq, gt, isNull, not, or, sql, type SQL } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import type { Ending } from '../../domain/observed';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { allocations } from '../schema';
import { isoOrNull } from './dates';

export type AllocationRow = typeof allocations.$inferSelect;

/** SQL true for allocations that still hold their node: not released, not past their end. */
export const isOpen = and(
  isNull(allocations.releasedAt),
  or(isNull(allocations.endsAt), gt(allocations.endsAt, sql`now()`)),
)!;

/** One live allocation of the node, if it holds any. */
export async function liveAllocation(db: DbOrTx, nodeId: string): Promise<{ id: string } | undefined> {
  const [live] = await db
    .select({ id: allocations.id })
    .from(allocations)
    .where(and(eq(allocations.nodeId, nodeId), isOpen))
    .limit(1);
  return live;
}

export async function countOpenAllocations(db: DbOrTx, nodeId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(allocations)
    .where(and(eq(allocations.nodeId, nodeId), isOpen));
  return row?.n ?? 0;
}

/** The node's open allocations, by id: the first `limit` of them, and how many there are in all. */
export async function openAllocationsOf(
  db: DbOrTx,
  nodeId: string,
  limit: number,
): Promise<{ total: number; allocations: { id: string; tenantId: string }[] }> {
  const rows = await db
    .select({ id: allocations.id, tenantId: allocations.tenantId, total: sql<number>`count(*) over ()` })
    .from(allocations)
    .where(and(eq(allocations.nodeId, nodeId), isOpen))
    .orderBy(asc(allocations.id))
    .limit(limit);
  return {
    total: Number(rows[0]?.total ?? 0),
    allocations: rows.map(({ id, tenantId }) => ({ id, tenantId })),
  };
}

/** The allocation object of the API (docs/api.md); `live` is `isOpen` as the database saw it. */
export function allocationView(a: AllocationRow, live: boolean) {
  return {
    id: a.id,
    nodeId: a.nodeId,
    tenantId: a.tenantId,
    kind: a.kind,
    createdAt: a.createdAt.toISOString(),
    endsAt: isoOrNull(a.endsAt),
    releasedAt: isoOrNull(a.releasedAt),
    releasedBy: a.releasedBy,
    source: a.source,
    externalId: a.externalId,
    endRequestedAt: isoOrNull(a.endRequestedAt),
    ending: endingOf(a),
    live,
  };
}

/** What its scheduler answered when asked to end it (observed work), or null before any answer. */
export function endingOf(a: Pick<AllocationRow, 'endAction' | 'endAnswer' | 'endingAt'>): Ending | null {
  return a.endAction && a.endAnswer !== null && a.endingAt
    ? { action: a.endAction, answer: a.endAnswer, at: a.endingAt.toISOString() }
    : null;
}
export type AllocationView = ReturnType<typeof allocationView>;

/** SQL true for allocations the principal may see: operators all, a tenant key its own tenant's. */
function allocationsVisibleTo(principal: Principal): SQL {
  if (principal.kind === 'operator') return sql`true`;
  if (principal.kind === 'node') return sql`false`;
  return eq(allocations.tenantId, principal.tenantId);
}

const withLive = { allocation: allocations, live: sql<boolean>`(${isOpen})` };

export interface AllocationFilter {
  nodeId?: string;
  tenantId?: string;
  /** Observed allocations of this scheduler (`slurm:<cluster>`), and of this piece of its work. */
  source?: string;
  externalId?: string;
  /** true: only live (`isOpen`); false: only ended; absent: all. */
  live?: boolean;
  /** The id of the last allocation of the page before: the page goes on after its (createdAt, id). */
  after?: string;
  limit: number;
}

/** The allocations the principal sees that match, by (createdAt, id), as API objects. */
export async function listAllocations(
  db: DbOrTx,
  principal: Principal,
  q: AllocationFilter,
): Promise<AllocationView[]> {
  const filters: (SQL | undefined)[] = [
    allocationsVisibleTo(principal),
    q.nodeId ? eq(allocations.nodeId, q.nodeId) : undefined,
    q.tenantId ? eq(allocations.tenantId, q.tenantId) : undefined,
    q.source ? eq(allocations.source, q.source) : undefined,
    q.externalId ? eq(allocations.externalId, q.externalId) : undefined,
    q.live === undefined ? undefined : q.live ? isOpen : not(isOpen),
    // The cursor's own row gives the key, so created_at keeps its full (microsecond) precision.
    q.after
      ? sql`(${allocations.createdAt}, ${allocations.id}) > (select created_at, id from allocations where id = ${q.after})`
      : undefined,
  ];
  const rows = await db
    .select(withLive)
    .from(allocations)
    .where(and(...filters))
    .orderBy(asc(allocations.createdAt), asc(allocations.id))
    .limit(q.limit);
  return rows.map((r) => allocationView(r.allocation, r.live));
}

/** The allocation as the principal sees it, or NOT_FOUND (another tenant's is not there for it). */
export async function getVisibleAllocation(
  db: DbOrTx,
  id: string,
  principal: Principal,
): Promise<AllocationView> {
  const [row] = await db
    .select(withLive)
    .from(allocations)
    .where(and(eq(allocations.id, id), allocationsVisibleTo(principal)));
  if (!row) throw new DrydockError('NOT_FOUND', `allocation ${id} not found`, { allocationId: id });
  return allocationView(row.allocation, row.live);
}
