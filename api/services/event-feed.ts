import type { Principal } from '../../domain/principal';
import type { EventRow } from '../../db/queries/events';
import { feedHorizon } from '../../db/events';
import { listFeedEvents, type EventFilters } from '../../db/queries/event-feed';
import type { AppDeps } from '../env';

/** A long-poll looks again this often even without a NOTIFY (one lost while the LISTEN reconnected). */
const RECHECK_MS = 5_000;

/**
 * One page of the fleet feed after `afterId` (narrowed by the filters: the audit follows with them), waiting up to `waitMs` for one when there is none.
 * `nextCursor` is where the next call starts: the last item's id on a full page, otherwise the
 * feed's horizon (every event up to it was looked at and is final), never behind `afterId`.
 * `limit` 0 reads no event and does not wait: its cursor is where the feed stands now.
 */
export async function readEventFeed(
  deps: Pick<AppDeps, 'db' | 'feedWakeups'>,
  principal: Principal,
  q: EventFilters & {
    afterId: number;
    typePrefixes?: string[];
    limit: number;
    waitMs: number;
    signal: AbortSignal;
  },
): Promise<{ items: EventRow[]; nextCursor: number }> {
  const deadline = Date.now() + q.waitMs;
  for (;;) {
    // Armed before the read, so an event committed while we read is a wake-up, not a missed one.
    const wakeup = deps.feedWakeups.arm('');
    try {
      const horizon = await feedHorizon(deps.db);
      if (q.limit === 0) return { items: [], nextCursor: Math.max(q.afterId, horizon) };
      const items = await listFeedEvents(deps.db, principal, { ...q, horizon });
      const last = items[items.length - 1];
      const nextCursor = items.length === q.limit && last ? last.id : Math.max(q.afterId, horizon);
      const left = deadline - Date.now();
      if (items.length > 0 || left <= 0) return { items, nextCursor };
      await wakeup.wait(Math.min(left, RECHECK_MS), q.signal);
      if (q.signal.aborted) return { items: [], nextCursor: q.afterId };
    } finally {
      wakeup.cancel();
    }
  }
}
