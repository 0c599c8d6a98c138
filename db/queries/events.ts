import { and, asc, eq, gt, like } from 'drizzle-orm';
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

/** A node's events oldest first, those whose type starts with `typePrefix` when one is given. */
export async function listNodeEvents(
  db: DbOrTx,
  nodeId: string,
  q: { typePrefix?: string; afterId?: number; limit: number },
): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(
      and(
        eq(events.nodeId, nodeId),
        q.typePrefix ? like(events.type, `${q.typePrefix}%`) : undefined,
        q.afterId === undefined ? undefined : gt(events.id, q.afterId),
      ),
    )
    .orderBy(asc(events.id))
    .limit(q.limit);
}
