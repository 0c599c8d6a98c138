import { resolve } from 'node:path';
import postgres from 'postgres';
import { loadConfig } from '../../config';
import { migrateDatabase } from '../../db/migrate';
import { startPostgres } from '../../scripts/services/postgres';
import { freePort } from '../../scripts/services/process';
import { startTemporal } from '../../scripts/services/temporal';
import { withDatabase } from '../../test/support/database-url';
import type { Log } from './benchmark';
import type { Teardown } from './teardown';

/** The machine's Postgres (README, Development), used when DATABASE_URL is not set. */
const MACHINE_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchServices {
  /** A fresh, migrated database of this run; dropped at teardown. */
  databaseUrl: string;
  postgres: { source: 'DATABASE_URL' | 'machine' | 'embedded'; database: string };
  temporal: { address: string; source: string };
}

/**
 * Postgres and Temporal for one benchmark run, the way the tests get them: DATABASE_URL, else the
 * machine's Postgres, else an embedded one, with a database `drydock_bench_<pid>` of its own;
 * TEMPORAL_ADDRESS, else a headless dev server on a free port. Everything lands in `teardown`.
 */
export async function startServices(teardown: Teardown, log: Log): Promise<BenchServices> {
  const config = loadConfig();
  const home = resolve(config.DRYDOCK_HOME);
  const [pg, temporal] = await Promise.all([
    startDatabase(config.DATABASE_URL, home, teardown, log),
    startTemporal({
      address: config.TEMPORAL_ADDRESS,
      cli: config.TEMPORAL_CLI,
      home,
      port: await freePort(),
      headless: true,
      log: (line) => log(`temporal: ${line}`),
    }).then((server) => {
      teardown.add('stop Temporal', () => server.stop());
      return server;
    }),
  ]);
  return {
    databaseUrl: pg.url,
    postgres: { source: pg.source, database: pg.database },
    temporal: { address: temporal.address, source: temporal.source },
  };
}

/** Only the database of `startServices`, for a benchmark that needs no Temporal. */
export async function startBenchDatabase(
  teardown: Teardown,
  log: Log,
): Promise<Omit<BenchServices, 'temporal'>> {
  const config = loadConfig();
  const pg = await startDatabase(config.DATABASE_URL, resolve(config.DRYDOCK_HOME), teardown, log);
  return { databaseUrl: pg.url, postgres: { source: pg.source, database: pg.database } };
}

async function startDatabase(url: string | undefined, home: string, teardown: Teardown, log: Log) {
  let adminUrl = url ?? MACHINE_POSTGRES;
  let source: BenchServices['postgres']['source'] = url ? 'DATABASE_URL' : 'machine';
  if (!url && !(await reachable(adminUrl))) {
    log(`postgres: ${new URL(adminUrl).host} unreachable, starting an embedded Postgres`);
    const embedded = await startPostgres({ home: resolve(home, 'bench') });
    teardown.add('stop embedded Postgres', () => embedded.stop());
    adminUrl = embedded.url;
    source = 'embedded';
  }
  const database = `drydock_bench_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  teardown.add('close the admin connection', () => admin.end({ timeout: 5 }));
  await admin.unsafe(`drop database if exists ${database} with (force)`);
  await admin.unsafe(`create database ${database}`);
  teardown.add(`drop database ${database}`, () =>
    admin.unsafe(`drop database if exists ${database} with (force)`),
  );
  const databaseUrl = withDatabase(adminUrl, database);
  await migrateDatabase(databaseUrl);
  return { url: databaseUrl, source, database };
}

async function reachable(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}
