import { desc, inArray, sql } from 'drizzle-orm';
import type { Db } from './client';
import { people } from './schema';

/** A provider identity acting as a recorded actor: who `user:<email>` was. */
export interface PersonSeen {
  issuer: string;
  subject: string;
  actor: string;
  email: string | null;
}

/** Records that the identity acted as `actor` now: its first sighting, or its latest. */
export async function recordPersonSeen(db: Db, person: PersonSeen, now: Date): Promise<void> {
  await db
    .insert(people)
    .values({ ...person, firstSeenAt: now, lastSeenAt: now })
    .onConflictDoUpdate({
      target: [people.issuer, people.subject, people.actor],
      set: { email: person.email, lastSeenAt: sql`greatest(${people.lastSeenAt}, excluded.last_seen_at)` },
    });
}

/** Every identity that acted as one of `actors`, newest first sighting first. */
export async function identitiesOf(
  db: Db,
  actors: string[],
): Promise<(PersonSeen & { firstSeenAt: Date })[]> {
  if (actors.length === 0) return [];
  return db
    .select({
      issuer: people.issuer,
      subject: people.subject,
      actor: people.actor,
      email: people.email,
      firstSeenAt: people.firstSeenAt,
    })
    .from(people)
    .where(inArray(people.actor, actors))
    .orderBy(desc(people.firstSeenAt));
}
