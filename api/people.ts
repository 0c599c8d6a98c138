import type { Db } from '../db/client';
import { recordPersonSeen, type PersonSeen } from '../db/people';

/** How often one process writes that a person it already recorded was seen again. */
const SEEN_AGAIN_MS = 5 * 60 * 1000;

/**
 * Keeps the `people` table's record of which provider identity acts under which actor
 * (db/schema/people.ts). The first request of an identity as an actor in this process writes it
 * before the request goes on, so the row's first sighting is never after an event it records;
 * after that, one write per identity every few minutes moves its last sighting.
 */
export class People {
  /** `issuer subject actor` → when this process last wrote it (epoch ms). */
  private readonly written = new Map<string, number>();

  constructor(private readonly db: Db) {}

  async seen(person: PersonSeen, now = Date.now()): Promise<void> {
    const key = `${person.issuer}\n${person.subject}\n${person.actor}`;
    const last = this.written.get(key);
    if (last !== undefined && now - last < SEEN_AGAIN_MS) return;
    await recordPersonSeen(this.db, person, new Date(now));
    this.written.set(key, now);
  }
}
