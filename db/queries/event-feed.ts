import { eq, gt, gte, lt, lte, type SQL } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { events } from '../schema';
import { eventPage, type EventRow } from './events';

/** What a reader of the fleet's events may narrow them to, beyond the type prefixes. */
export interface EventFilters {
  nodeId?: string;
  /** The exact actor (`key:ops`, `node:n_…`, `user:alice@example.com`). */
  actor?: string;
  /** Events created at or after this instant. */
  since?: Date;
  /** Events created before this instant. */
  until?: Date;
}

function filterConditions(q: EventFilters): (SQL | undefined)[] {
  return [
    q.nodeId ? eq(events.nodeId, q.nodeId) : undefined,
    q.actor === undefined ? undefined : eq(events.actor, q.actor),
    q.since ? gte(events.createdAt, q.since) : undefined,
    q.until ? lt(events.createdAt, q.until) : undefined,
  ];
}

/**
 * Fleet events after `afterId` up to `horizon` (`feedHorizon` in db/events.ts), oldest first,
 * those whose type starts with one of `typePrefixes` and that meet the filters, projected as the
 * per-node feed is (`eventPage`).
 */
export async function listFeedEvents(
  db: DbOrTx,
  principal: Principal,
  q: EventFilters & { afterId: number; horizon: number; typePrefixes?: string[]; limit: number },
): Promise<EventRow[]> {
  return eventPage(db, principal, {
    ...q,
    conditions: [gt(events.id, q.afterId), lte(events.id, q.horizon), ...filterConditions(q)],
  });
}

/**
 * Fleet events newest first, before `beforeId` when given (the last event of the page before),
 * meeting the same filters as the feed.
 */
export async function listEventsNewestFirst(
  db: DbOrTx,
  principal: Principal,
  q: EventFilters & { beforeId?: number; typePrefixes?: string[]; limit: number },
): Promise<EventRow[]> {
  return eventPage(db, principal, {
    ...q,
    newestFirst: true,
    conditions: [q.beforeId === undefined ? undefined : lt(events.id, q.beforeId), ...filterConditions(q)],
  });
}
