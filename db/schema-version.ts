import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';
import { createDb } from './client';

/** The committed migrations; a build copies them next to its code (dist/migrations). */
export const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/** One migration this build ships: drizzle-kit's journal entry. */
export interface ShippedMigration {
  tag: string;
  /** The journal's `when`: drizzle records it as `created_at` when it applies the migration. */
  when: number;
}

/** The migrations this build ships, oldest first (drizzle-kit's `meta/_journal.json`). */
export function shippedMigrations(): ShippedMigration[] {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: ShippedMigration[];
  };
  return journal.entries.map(({ tag, when }) => ({ tag, when }));
}

/** How the database's schema stands against this build's migrations. */
export interface SchemaStatus {
  /** How many migrations this build ships. */
  shipped: number;
  /** The shipped ones `drydock migrate` would apply, oldest first. */
  pending: string[];
  /** How many applied migrations this build does not ship: a newer build migrated the database. */
  unknown: number;
}

/**
 * Reads, without changing anything, which migrations the database has. drizzle's migrator records
 * each applied one in `drizzle.__drizzle_migrations` with the journal's `when` as `created_at`, and
 * applies exactly those newer than the newest recorded: `pending` follows the same rule, so it is
 * what `drydock migrate` applies. (A hash is recorded too; drizzle never compares it, nor do we.)
 */
export async function schemaStatus(sql: Sql): Promise<SchemaStatus> {
  const shipped = shippedMigrations();
  const [table] = await sql<{ exists: boolean }[]>`
    select to_regclass('drizzle.__drizzle_migrations') is not null as exists`;
  const recorded = table?.exists
    ? (
        await sql<{ createdAt: string }[]>`
        select created_at::text as "createdAt" from drizzle.__drizzle_migrations`
      ).map((row) => Number(row.createdAt))
    : [];
  const newest = Math.max(-Infinity, ...recorded);
  const known = new Set(shipped.map((m) => m.when));
  return {
    shipped: shipped.length,
    pending: shipped.filter((m) => m.when > newest).map((m) => m.tag),
    unknown: recorded.filter((when) => !known.has(when)).length,
  };
}

/** What a process about to serve should do about the schema: refuse, warn, or just start. */
export type SchemaVerdict = { ok: false; message: string } | { ok: true; warning?: string };

/** The verdict on `status` for an API process or a worker: a schema behind this build is refused. */
export function schemaVerdict(status: SchemaStatus): SchemaVerdict {
  if (status.pending.length > 0) {
    const applied = status.shipped - status.pending.length;
    return {
      ok: false,
      message: `the database schema is behind this build (${applied} of ${status.shipped} migrations applied): run \`drydock migrate\``,
    };
  }
  if (status.unknown > 0) {
    // A rolling upgrade: the new build migrated first, this one keeps serving until replaced.
    return {
      ok: true,
      warning: `the database schema is ahead of this build (${status.unknown} migration(s) it does not know, from a newer build): starting anyway`,
    };
  }
  return { ok: true };
}

/** The verdict on the database at `url`, read on a connection of its own. */
export async function checkSchema(url: string): Promise<SchemaVerdict> {
  const { sql, close } = createDb(url, { max: 1 });
  try {
    return schemaVerdict(await schemaStatus(sql));
  } finally {
    await close();
  }
}

/**
 * The check an API process or a worker makes before it opens anything: false (after one fatal
 * line, with the exit code set to 1) when the schema is behind; a warning when it is ahead.
 * Returning, not exiting, lets the logger flush the line before the process ends.
 */
export async function schemaAllowsStart(
  url: string,
  log: { fatal(message: string): void; warn(message: string): void },
): Promise<boolean> {
  const schema = await checkSchema(url);
  if (!schema.ok) {
    log.fatal(schema.message);
    process.exitCode = 1;
    return false;
  }
  if (schema.warning) log.warn(schema.warning);
  return true;
}
