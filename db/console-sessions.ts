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
    /**
     * `work` on the session row of `idHash`, locked FOR UPDATE until its change commits (a
     * person's token refresh, one at a time per session on every API process). A row another
     * transaction holds is skipped, not waited for: `busy` (a waiting request would hold a pooled
     * connection while the holder may need one); undefined when there is no such row.
     */
    async locked<T>(
      idHash: string,
      work: (row: ConsoleSessionRow) => Promise<{
        set?: Pick<ConsoleSessionRow, 'sealedKey' | 'caller'>;
        remove?: boolean;
        result: T;
      }>,
    ): Promise<{ result: T } | 'busy' | undefined> {
      return db.transaction(async (tx) => {
        const [row] = await tx
          .select()
          .from(consoleSessions)
          .where(eq(consoleSessions.idHash, idHash))
          .for('update', { skipLocked: true });
        if (!row) {
          const [held] = await tx
            .select({ idHash: consoleSessions.idHash })
            .from(consoleSessions)
            .where(eq(consoleSessions.idHash, idHash));
          return held ? 'busy' : undefined;
        }
        const done = await work(row);
        if (done.remove) await tx.delete(consoleSessions).where(eq(consoleSessions.idHash, idHash));
        else if (done.set)
          await tx.update(consoleSessions).set(done.set).where(eq(consoleSessions.idHash, idHash));
        return { result: done.result };
      });
    },
  };
}
