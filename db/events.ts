import type { DrydockEvent } from '../domain/events';
import type { DbOrTx } from './client';
import { events } from './schema';

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
