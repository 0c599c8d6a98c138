import { boolean, index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/**
 * The per-address rate limits (api/rate-limit.ts), shared by every API process: one row per limit
 * and source address, kept as the generic cell rate algorithm keeps a token bucket, by one time.
 * `tat` (theoretical arrival time) moves one emission interval (a minute ÷ the rate) ahead with each
 * event allowed; an event is refused while `tat` is more than the burst's worth of intervals ahead
 * of now. A row whose `tat` has passed is a full bucket, as good as none: it is deleted.
 */
export const rateLimits = pgTable(
  'rate_limits',
  {
    /** Which limit: `auth-failures` or `tokenless-joins`. */
    name: text('name').notNull(),
    /** The source address, as the limit counts it (an IPv6 address by its /64). */
    source: text('source').notNull(),
    tat: tz('tat').notNull(),
    /** Whether the last event counted here was allowed. */
    allowed: boolean('allowed').notNull(),
  },
  (table) => [primaryKey({ columns: [table.name, table.source] }), index('rate_limits_tat').on(table.tat)],
);
