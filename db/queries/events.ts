import { and, asc, eq, gt, like, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { events } from '../schema';

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

/** Events oldest first meeting every condition, those whose type starts with `typePrefix` if given. */
export async function eventPage(
  db: DbOrTx,
  q: { conditions: (SQL | undefined)[]; typePrefix?: string; limit: number },
): Promise<EventRow[]> {
  const byType = q.typePrefix ? like(events.type, `${q.typePrefix}%`) : undefined;
  return db
    .select()
    .from(events)
    .where(and(byType, ...q.conditions))
    .orderBy(asc(events.id))
    .limit(q.limit);
}

/** A node's events oldest first, those whose type starts with `typePrefix` when one is given. */
export async function listNodeEvents(
  db: DbOrTx,
  nodeId: string,
  q: { typePrefix?: string; afterId?: number; limit: number },
): Promise<EventRow[]> {
  const after = q.afterId === undefined ? undefined : gt(events.id, q.afterId);
  return eventPage(db, { ...q, conditions: [eq(events.nodeId, nodeId), after] });
}
