import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/**
 * The people the API has seen sign in at the OpenID provider: which provider identity (issuer and
 * subject, stable at the provider) acted under which recorded actor (`user:<email>`), first and last
 * seen. Events name `user:<email>`; this says whose email it was at the time (api/people.ts).
 */
export const people = pgTable(
  'people',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    actor: text('actor').notNull(),
    email: text('email'),
    firstSeenAt: tz('first_seen_at').notNull().defaultNow(),
    lastSeenAt: tz('last_seen_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.issuer, t.subject, t.actor] }),
    index('people_actor_idx').on(t.actor, t.firstSeenAt),
  ],
);
