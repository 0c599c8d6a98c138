import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { rateLimits } from './schema';

/** A token bucket: `burst` events at once, then `perMinute` spread over the minute. */
export interface Rate {
  perMinute: number;
  burst: number;
}

/** Rows of full buckets deleted by one event at most: each event's cost stays bounded. */
const EXPIRED_PER_EVENT = 100;

/**
 * Counts one event of the limit `name` from `source` at `now`, in one statement that every API
 * process sees (db/schema/rate-limits.ts): the row's `tat` moves one interval on when the event is
 * allowed, and stays when it is refused. Concurrent events of one row queue on its lock, so each
 * sees the one before it. The same statement deletes up to `EXPIRED_PER_EVENT` rows of other
 * sources whose buckets are full again (skipping any another event holds). Resolves to 0 when the
 * event is allowed, else the milliseconds until one more would be.
 */
export async function countEvent(
  db: Db,
  event: { name: string; source: string; rate: Rate; now: Date },
): Promise<number> {
  const { name, source } = event;
  // As text: drizzle hands the driver parameters of a raw query as they are.
  const now = sql`${event.now.toISOString()}::timestamptz`;
  // The generic cell rate algorithm: one event per `interval`, `tolerance` ahead at most (the burst).
  const interval = 60_000 / event.rate.perMinute;
  const tolerance = interval * (event.rate.burst - 1);
  const ms = sql`interval '1 millisecond'`;
  const ahead = sql`greatest(r.tat, ${now}) - ${now}`;
  const rows = await db.execute<{ allowed: boolean; wait_ms: number }>(sql`
    with expired as (
      delete from ${rateLimits} where ctid = any(array(
        select ctid from ${rateLimits}
        where ${rateLimits.tat} < ${now}
          and (${rateLimits.name}, ${rateLimits.source}) <> (${name}::text, ${source}::text)
        limit ${EXPIRED_PER_EVENT}
        for update skip locked
      ))
    )
    insert into ${rateLimits} as r (name, source, tat, allowed)
    values (${name}, ${source}, ${now} + ${interval}::float8 * ${ms}, true)
    on conflict (name, source) do update set
      allowed = ${ahead} <= ${tolerance}::float8 * ${ms},
      tat = case
        when ${ahead} <= ${tolerance}::float8 * ${ms}
        then greatest(r.tat, ${now}) + ${interval}::float8 * ${ms}
        else r.tat
      end
    returning allowed, (extract(epoch from tat - ${now}) * 1000 - ${tolerance})::float8 as wait_ms`);
  const [row] = rows;
  return row!.allowed ? 0 : Math.max(0, Number(row!.wait_ms));
}
