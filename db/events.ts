import type { DrydockEvent } from '../domain/events';
import type { DbOrTx } from './client';
import { events } from './schema';

export type EventRow = typeof events.$inferSelect;

/** An event to append: what happened (`DrydockEvent`: its type and payload), to what, by whom, why. */
export type NewEvent = DrydockEvent & {
  nodeId?: string | null;
  tenantId?: string | null;
  actor: string;
  reason?: string | null;
  operationId?: string | null;
};

/** Appends one event; call it inside the transaction of the change it records. */
export async function appendEvent(db: DbOrTx, event: NewEvent): Promise<void> {
  await db.insert(events).values(event);
}

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
