import { eq, gt, lte, sql } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { events, nodes } from '../schema';
import { eventPage, type EventRow } from './events';
import { visibleTo } from './nodes';

/**
 * Fleet events after `afterId` up to `horizon` (`feedHorizon` in db/events.ts), oldest first,
 * those whose type starts with `typePrefix` (and of `nodeId` alone when given), projected as the per-node feed is: operators see
 * every event, a tenant only those of nodes it can see (`visibleTo`).
 */
export async function listFeedEvents(
  db: DbOrTx,
  principal: Principal,
  q: { afterId: number; horizon: number; typePrefix?: string; nodeId?: string; limit: number },
): Promise<EventRow[]> {
  const visible =
    principal.kind === 'operator'
      ? undefined
      : sql`${events.nodeId} in (select ${nodes.id} from ${nodes} where ${visibleTo(principal)})`;
  return eventPage(db, {
    ...q,
    conditions: [
      gt(events.id, q.afterId),
      lte(events.id, q.horizon),
      q.nodeId ? eq(events.nodeId, q.nodeId) : undefined,
      visible,
    ],
  });
}
