import { and, asc, desc, eq, gt, like, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { events, nodes } from '../schema';
import { visibleTo } from './nodes';

export type EventRow = typeof events.$inferSelect;

export function eventView(e: EventRow) {
  return {
    id: String(e.id),
    nodeId: e.nodeId,
    tenantId: e.tenantId,
    type: e.type,
    actor: e.actor,
    reason: e.reason,
    data: e.data,
    operationId: e.operationId,
    createdAt: e.createdAt.toISOString(),
  };
}

/**
 * The events projection, the one both feeds apply: operators see every event, a tenant only those
 * of nodes it can see (`visibleTo`) — but an `allocation.*` event only when it is about the
 * tenant's own allocation (the event's `tenantId`), even on a node shared with other tenants and
 * even once the node is out of its sight.
 */
function eventsVisibleTo(principal: Principal): SQL | undefined {
  if (principal.kind === 'operator') return undefined;
  const tenantId = principal.kind === 'tenant' ? principal.tenantId : null;
  return sql`case when ${events.type} like 'allocation.%' then ${events.tenantId} = ${tenantId}
    else ${events.nodeId} in (select ${nodes.id} from ${nodes} where ${visibleTo(principal)}) end`;
}

/**
 * The events `principal` may see, oldest first (or newest first), meeting every condition, those
 * whose type starts with one of `typePrefixes` if given.
 */
export async function eventPage(
  db: DbOrTx,
  principal: Principal,
  q: { conditions: (SQL | undefined)[]; typePrefixes?: string[]; limit: number; newestFirst?: boolean },
): Promise<EventRow[]> {
  const byType = q.typePrefixes ? or(...q.typePrefixes.map((p) => like(events.type, `${p}%`))) : undefined;
  return db
    .select()
    .from(events)
    .where(and(byType, eventsVisibleTo(principal), ...q.conditions))
    .orderBy(q.newestFirst ? desc(events.id) : asc(events.id))
    .limit(q.limit);
}

/**
 * A node's events as `principal` sees them (the projection of `eventPage`), oldest first or newest
 * first, those whose type starts with one of `typePrefixes` when given. `afterId` is the last event
 * of the page before, in the same order.
 */
export async function listNodeEvents(
  db: DbOrTx,
  principal: Principal,
  nodeId: string,
  q: { typePrefixes?: string[]; afterId?: number; limit: number; newestFirst?: boolean },
): Promise<EventRow[]> {
  const beyond = q.newestFirst ? lt : gt;
  const after = q.afterId === undefined ? undefined : beyond(events.id, q.afterId);
  return eventPage(db, principal, { ...q, conditions: [eq(events.nodeId, nodeId), after] });
}
