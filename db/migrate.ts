import { sql } from 'drizzle-orm';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { createDb } from './client';
import { migrationsFolder, schemaStatus } from './schema-version';

/** Any fixed number: the advisory lock that lets one process at a time migrate. */
const MIGRATION_LOCK = 4_720_001;

/** What one migration run did. */
export interface MigrationRun {
  /** The migrations it applied, oldest first; none when the schema was current. */
  applied: string[];
  /** How many migrations this build ships. */
  total: number;
}

/**
 * Applies the committed migrations to the database at `url`. Several processes migrating at once
 * take turns on an advisory lock; the one that comes second finds nothing pending, so each
 * migration runs exactly once.
 */
export async function migrateDatabase(url: string): Promise<MigrationRun> {
  const { db, sql: client, close } = createDb(url, { max: 1 });
  try {
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK})`);
    // Read under the lock, with the migrator's own rule: these are what `migrate` applies next
    // (all in one transaction, so it applies all of them or throws).
    const before = await schemaStatus(client);
    await migrate(db, { migrationsFolder });
    return { applied: before.pending, total: before.shipped };
  } finally {
    await close();
  }
}
