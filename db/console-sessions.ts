import { and, eq, gt, lte } from 'drizzle-orm';
import type { Db } from './client';
import { consoleSessions } from './schema';

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect;

/** The console's session rows (console/sessions.ts seals what they hold), shared by every API process. */
export function consoleSessionStore(db: Db) {
  return {
    /** Adds a session; the expired ones go at the same time. */
    async insert(row: ConsoleSessionRow, now: Date): Promise<void> {
      await db.delete(consoleSessions).where(lte(consoleSessions.expiresAt, now));
      await db.insert(consoleSessions).values(row);
    },
    /** The live session of `idHash` with its expiry moved to `expiresAt`; undefined when gone. */
    async touch(idHash: string, now: Date, expiresAt: Date): Promise<ConsoleSessionRow | undefined> {
      const [row] = await db
        .update(consoleSessions)
        .set({ expiresAt })
        .where(and(eq(consoleSessions.idHash, idHash), gt(consoleSessions.expiresAt, now)))
        .returning();
      return row;
    },
    async update(idHash: string, set: Pick<ConsoleSessionRow, 'flash' | 'sealedCreated'>): Promise<void> {
      await db.update(consoleSessions).set(set).where(eq(consoleSessions.idHash, idHash));
    },
    async delete(idHash: string): Promise<void> {
      await db.delete(consoleSessions).where(eq(consoleSessions.idHash, idHash));
    },
  };
}
