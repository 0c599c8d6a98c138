import { eq, gt, lte } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { events } from '../schema';
import { eventPage, type EventRow } from './events';

/**
 * Fleet events after `afterId` up to `horizon` (`feedHorizon` in db/events.ts), oldest first,
 * those whose type starts with one of `typePrefixes` (and of `nodeId` alone when given), projected as the
 * per-node feed is (`eventPage`).
 */
export async function listFeedEvents(
  db: DbOrTx,
  principal: Principal,
  q: { afterId: number; horizon: number; typePrefixes?: string[]; nodeId?: string; limit: number },
): Promise<EventRow[]> {
  return eventPage(db, principal, {
    ...q,
    conditions: [
      gt(events.id, q.afterId),
      lte(events.id, q.horizon),
      q.nodeId ? eq(events.nodeId, q.nodeId) : undefined,
    ],
  });
}
