import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { createDb } from './client';

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/** Any fixed number: the advisory lock that lets one process at a time migrate. */
const MIGRATION_LOCK = 4_720_001;

/**
 * Applies the committed migrations to the database at `url`. Several API processes starting at
 * once take turns on an advisory lock, so each migration runs exactly once.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const { db, close } = createDb(url, { max: 1 });
  try {
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK})`);
    await migrate(db, { migrationsFolder });
  } finally {
    await close();
  }
}
