import { sql } from 'drizzle-orm';
import type { DrydockEvent } from '../domain/events';
import type { Db, Tx } from './client';
import { events } from './schema';
import { EVENTS_CHANNEL } from './wakeups';

/** An event to append: what happened (`DrydockEvent`: its type and payload), to what, by whom, why. */
export type NewEvent = DrydockEvent & {
  nodeId?: string | null;
  tenantId?: string | null;
  actor: string;
  reason?: string | null;
  operationId?: string | null;
};

/**
 * Any fixed number: the advisory lock that orders the event feed. Every transaction that appends
 * an event holds it shared until it ends (appenders never wait on one another); a feed read takes
 * it exclusively for an instant (`feedHorizon`), so at that instant no
 * transaction holds an event id it has not committed yet.
 */
export const EVENT_FEED_LOCK = 720_412_001;

/**
 * Appends one event inside the transaction of the change it records. It also tells the event
 * feed's long-polls on every API process that there is something new (NOTIFY, delivered on commit).
 * The lock and the insert are sent together and run in the order sent (one connection), so the
 * event's id is taken under the lock, in one round trip with the statements pipelined.
 */
export async function appendEvent(tx: Tx, event: NewEvent): Promise<void> {
  await Promise.all([
    tx.execute(
      sql`select pg_advisory_xact_lock_shared(${EVENT_FEED_LOCK}), pg_notify(${EVENTS_CHANNEL}, '')`,
    ),
    tx.insert(events).values(event).prepare('append_event').execute(),
  ]);
}

/**
 * The largest event id below which the feed is final: every event with a smaller or equal id has
 * committed (or never will), so a follower that has read up to it can never be handed an older id
 * later. Event ids come from a sequence, so without this a transaction that took id 10 and commits
 * after one that took id 11 would be skipped by a follower that had already moved past 11.
 *
 * Appenders hold `EVENT_FEED_LOCK` shared from their first event to their commit; this takes it
 * exclusively, which waits for the appenders in flight to end, then reads the largest id. At that
 * instant no transaction holds an uncommitted id, so the read is the horizon. New appenders wait
 * only for this one short transaction (at most `lock_timeout`; past it the read is UNAVAILABLE).
 */
export async function feedHorizon(db: Db): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local lock_timeout = '5s'`);
    await tx.execute(sql`select pg_advisory_xact_lock(${EVENT_FEED_LOCK})`);
    const [row] = await tx.select({ max: sql<string | null>`max(${events.id})` }).from(events);
    return Number(row?.max ?? 0);
  });
}
