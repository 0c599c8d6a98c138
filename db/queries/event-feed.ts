import { eq, gt, lte, sql } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { events, nodes } from '../schema';
import { eventPage, type EventRow } from './events';
import { visibleTo } from './nodes';

/**
 * Fleet events after `afterId` up to `horizon` (`feedHorizon` in db/events.ts), oldest first,
 * those whose type starts with `typePrefix` (and of `nodeId` alone when given), projected as the per-node feed is: operators see
 * every event, a tenant only those of nodes it can see (`visibleTo`) — but an `allocation.*` event
 * only to the allocation's tenant (the event's `tenantId`), even once the node is out of its sight.
 */
export async function listFeedEvents(
  db: DbOrTx,
  principal: Principal,
  q: { afterId: number; horizon: number; typePrefix?: string; nodeId?: string; limit: number },
): Promise<EventRow[]> {
  const visible = principal.kind === 'operator' ? undefined : tenantSees(principal);
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

function tenantSees(principal: Principal) {
  const tenantId = principal.kind === 'tenant' ? principal.tenantId : null;
  return sql`case when ${events.type} like 'allocation.%' then ${events.tenantId} = ${tenantId}
    else ${events.nodeId} in (select ${nodes.id} from ${nodes} where ${visibleTo(principal)}) end`;
}
