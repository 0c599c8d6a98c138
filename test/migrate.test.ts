import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDb } from '../db/client';
import { checkSchema, migrationsFolder, shippedMigrations } from '../db/schema-version';
import { freePort } from '../scripts/services/process';
import { BIN } from './support/cli';
import { useEmptyDatabases } from './support/empty-databases';
import { runNode } from './support/run-process';

const databases = useEmptyDatabases('drydock_migrate');
const shipped = shippedMigrations();
const scratch = mkdtempSync(join(tmpdir(), 'drydock-migrate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const drydockMigrate = (databaseUrl: string | undefined, ...flags: string[]) =>
  runNode([BIN, 'migrate', ...flags], databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl });

/** Runs `read` on a connection of its own to the database at `url`. */
async function query<T>(url: string, read: (sql: ReturnType<typeof createDb>['sql']) => Promise<T>) {
  const { sql, close } = createDb(url, { max: 1 });
  try {
    return await read(sql);
  } finally {
    await close();
  }
}

/** The rows drizzle's migrator records, one per migration it applied. */
const recorded = (url: string) =>
  query(url, async (sql) => {
    const [table] = await sql<{ exists: boolean }[]>`
      select to_regclass('drizzle.__drizzle_migrations') is not null as exists`;
    if (!table?.exists) return [];
    return sql<{ hash: string; createdAt: string }[]>`
      select hash, created_at::text as "createdAt" from drizzle.__drizzle_migrations order by id`;
  });

/** Everything a migration could have changed: relations, columns, functions, triggers, schemas. */
const schemaSnapshot = (url: string) =>
  query(url, async (sql) => ({
    schemas: await sql`select nspname from pg_namespace where nspname not like 'pg\\_%' order by 1`,
    columns: await sql`
      select table_schema, table_name, column_name, data_type from information_schema.columns
      where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2, 3`,
    functions: await sql`
      select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' order by 1`,
    triggers: await sql`select tgname from pg_trigger where not tgisinternal order by 1`,
    migrations: await sql`select count(*)::int as n from pg_class where relname = '__drizzle_migrations'`,
  }));

/**
 * A copy of the migrations with the journal's entries as `entries` makes them: applied with
 * drizzle's migrator, it leaves a database as an older or a newer build would have.
 */
function migrationsLike(
  name: string,
  entries: (journal: { when: number; tag: string }[]) => { when: number; tag: string }[],
): string {
  const folder = join(scratch, name);
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as {
    entries: { when: number; tag: string }[];
  };
  journal.entries = entries(journal.entries);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}

async function migratedWith(folder: string): Promise<string> {
  const url = await databases.create();
  const { db, close } = createDb(url, { max: 1 });
  try {
    await migrate(db, { migrationsFolder: folder });
  } finally {
    await close();
  }
  return url;
}

/** The environment of an API process or worker on `databaseUrl`, with a home of its own. */
function serviceEnv(databaseUrl: string, home: string): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `migrate-test-${Date.now()}`,
    DRYDOCK_HOME: home,
    DRYDOCK_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    DRYDOCK_WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'info',
  };
}

/** The JSON log lines a process wrote (pino: one object per line when stdout is not a terminal). */
const logLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string });

describe('drydock migrate', () => {
  it("ships migrations whose journal times increase: drizzle applies only those newer than a database's newest", () => {
    const times = shipped.map((m) => m.when);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(times.length);
  });

  it('applies every migration on a fresh database, then finds the schema current and applies nothing', async () => {
    const url = await databases.create();
    const first = await drydockMigrate(url);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      `applied ${shipped.length} of ${shipped.length} migrations: ${shipped.map((m) => m.tag).join(', ')}; schema is current\n`,
    );
    const afterFirst = await recorded(url);
    expect(afterFirst.map((row) => Number(row.createdAt))).toEqual(shipped.map((m) => m.when));
    const snapshot = await schemaSnapshot(url);

    const second = await drydockMigrate(url);
    expect(second).toEqual({
      code: 0,
      stdout: `schema is current (${shipped.length} migrations)\n`,
      stderr: '',
    });
    const json = await drydockMigrate(url, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ applied: [], total: shipped.length });
    // No migration recorded (or run) twice, nothing else touched.
    expect(await recorded(url)).toEqual(afterFirst);
    expect(await schemaSnapshot(url)).toEqual(snapshot);
    expect(await checkSchema(url)).toEqual({ ok: true });
  });

  it('two at once on a fresh database: both succeed, each migration applied once', async () => {
    const url = await databases.create();
    const [a, b] = await Promise.all([drydockMigrate(url, '--json'), drydockMigrate(url, '--json')]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, '', '']);
    const runs = [a, b].map((run) => JSON.parse(run.stdout) as { applied: string[]; total: number });
    // One took the lock first and applied all of them; the other then found nothing to do.
    expect(runs.map((run) => run.applied.length).sort()).toEqual([0, shipped.length]);
    expect(runs.flatMap((run) => run.applied)).toEqual(shipped.map((m) => m.tag));
    const rows = await recorded(url);
    expect(rows.map((row) => Number(row.createdAt))).toEqual(shipped.map((m) => m.when));
    expect(new Set(rows.map((row) => row.hash)).size).toBe(shipped.length);
  });

  it('says what is wrong, with no stack, when DATABASE_URL is unset, not a URL or unreachable', async () => {
    const unset = await drydockMigrate(undefined);
    expect(unset).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: CONFIG: DATABASE_URL is not set: drydock migrate applies the migrations to the database it names (postgres://USER:PASSWORD@HOST:5432/DB)\n',
    });
    const malformed = await drydockMigrate('not a url');
    expect(malformed).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: CONFIG: invalid configuration: DATABASE_URL: Invalid URL\n',
    });
    const port = await freePort();
    const unreachable = await drydockMigrate(`postgres://drydock:s3cret@127.0.0.1:${port}/drydock`);
    expect(unreachable).toEqual({
      code: 1,
      stdout: '',
      // Which database, never its password.
      stderr: `error: DATABASE: cannot migrate the database at 127.0.0.1:${port}/drydock: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    });
  });
});

describe('an API process and a worker against the schema', () => {
  it('one migration behind: both exit 1 with one line naming drydock migrate, and change nothing', async () => {
    const url = await migratedWith(migrationsLike('behind', (entries) => entries.slice(0, -1)));
    const before = await schemaSnapshot(url);
    const recordedBefore = await recorded(url);
    expect(recordedBefore).toHaveLength(shipped.length - 1);
    const message = `the database schema is behind this build (${shipped.length - 1} of ${shipped.length} migrations applied): run \`drydock migrate\``;

    for (const entry of ['entry/api.ts', 'entry/worker.ts']) {
      const home = mkdtempSync(join(scratch, 'home-'));
      const run = await runNode(['--import', 'tsx', entry], serviceEnv(url, home));
      expect({ entry, code: run.code, stderr: run.stderr }).toEqual({ entry, code: 1, stderr: '' });
      expect(logLines(run.stdout).map(({ level, msg }) => ({ level, msg }))).toEqual([
        { level: 'fatal', msg: message },
      ]);
      // Not even the development CA key was made.
      expect(existsSync(join(home, 'ca-key.pem'))).toBe(false);
    }
    expect(await recorded(url)).toEqual(recordedBefore);
    expect(await schemaSnapshot(url)).toEqual(before);

    // The way out the message names: the one missing migration, applied.
    const migrated = await drydockMigrate(url);
    expect(migrated.stdout).toBe(
      `applied 1 of ${shipped.length} migrations: ${shipped.at(-1)!.tag}; schema is current\n`,
    );
    expect(await checkSchema(url)).toEqual({ ok: true });
  });

  it('no migrations table at all: behind, and checking it creates none', async () => {
    const url = await databases.create();
    const before = await schemaSnapshot(url);
    expect(await checkSchema(url)).toEqual({
      ok: false,
      message: `the database schema is behind this build (0 of ${shipped.length} migrations applied): run \`drydock migrate\``,
    });
    expect(await schemaSnapshot(url)).toEqual(before);
  });

  it('ahead (a newer build migrated it during a rolling upgrade): the API starts, with a warning', async () => {
    const newer = migrationsLike('ahead', (entries) => [
      ...entries,
      {
        ...entries.at(-1)!,
        idx: entries.length,
        when: entries.at(-1)!.when + 1_000,
        tag: '9999_newer_build',
      },
    ]);
    writeFileSync(join(newer, '9999_newer_build.sql'), 'CREATE TABLE newer_build_only (id integer);');
    const url = await migratedWith(newer);
    const port = await freePort();
    const home = mkdtempSync(join(scratch, 'home-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'entry/api.ts'], {
      env: { PATH: process.env.PATH, ...serviceEnv(url, home), PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lines: { level: string; msg: string }[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        void exited.then((code) => reject(new Error(`the API exited (${code}) before it listened`)));
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (!line.startsWith('{')) return;
          const parsed = JSON.parse(line) as { level: string; msg: string };
          lines.push(parsed);
          if (parsed.msg.includes('listening')) resolve();
        });
      });
      const answer = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(answer.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'fatal')).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'the database schema is ahead of this build (1 migration(s) it does not know, from a newer build): starting anyway',
      }),
    ]);
    // This build's migrate leaves a newer schema alone.
    const migrated = await drydockMigrate(url, '--json');
    expect(JSON.parse(migrated.stdout)).toEqual({ applied: [], total: shipped.length });
  });
});
