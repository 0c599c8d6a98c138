import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { resolve } from 'node:path';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../config';
import { migrateDatabase } from '../../db/migrate';
import { startPostgres } from '../../scripts/services/postgres';
import { freePort } from '../../scripts/services/process';
import { startTemporal } from '../../scripts/services/temporal';
import { registerSearchAttributes, workflowBundleSources } from '../../worker';
import { unpackedChromium } from './chromium';
import { withDatabase } from './database-url';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    templateDatabaseUrl: string;
    workflowBundlePath: string;
    chromiumPath: string;
  }
}

/** The machine's Postgres (README, Development), unless DATABASE_URL names another. */
const MACHINE_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Once per run: one Temporal dev server, one migrated template database, one workflow bundle, and
 * the browser tests' Chromium unpacked (once per checkout, test/support/chromium.ts; unpacked by
 * test files in parallel, one could launch the binary another is still writing).
 */
export default async function setup(project: TestProject) {
  requirePatchedPostgres();
  const config = loadConfig();
  const home = resolve(config.DRYDOCK_HOME);
  // First, alone: it sets TMPDIR while it unpacks (once per checkout; later runs reuse it).
  const chromiumPath = await unpackedChromium(home);
  const adminUrl = await reachablePostgres(config.DATABASE_URL ?? MACHINE_POSTGRES, home);
  const admin = postgres(adminUrl.url, { max: 1, onnotice: () => {} });
  const template = `drydock_tpl_${process.pid}`;
  await admin.unsafe(`drop database if exists ${template}`);
  await admin.unsafe(`create database ${template}`);
  const templateUrl = withDatabase(adminUrl.url, template);
  await migrateDatabase(templateUrl);

  const [temporal, bundle] = await Promise.all([
    startTemporal({
      address: config.TEMPORAL_ADDRESS,
      cli: config.TEMPORAL_CLI,
      home,
      // A port of its own, so a running `npm start` or another test run never collides with it.
      port: await freePort(),
      headless: true,
      log: (line) => console.log(`[temporal] ${line}`),
    }),
    bundleWorkflowCode({ ...workflowBundleSources(false), logger: quietLogger }),
  ]);
  // The worker registers these at start-up; files that run no in-process worker need them too.
  const connection = await NativeConnection.connect({ address: temporal.address });
  await registerSearchAttributes(connection, 'default');
  await connection.close();
  mkdirSync(resolve(home, 'test'), { recursive: true });
  const bundlePath = resolve(home, 'test', `workflow-bundle-${process.pid}.js`);
  writeFileSync(bundlePath, bundle.code);

  project.provide('temporalAddress', temporal.address);
  project.provide('templateDatabaseUrl', templateUrl);
  project.provide('workflowBundlePath', bundlePath);
  project.provide('chromiumPath', chromiumPath);

  return async () => {
    await temporal.stop();
    // Files drop their own databases; the template goes last.
    await admin.unsafe(`drop database if exists ${template} with (force)`);
    await admin.end();
    await adminUrl.stop();
  };
}

async function reachablePostgres(url: string, home: string) {
  const probe = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await probe`select 1`;
    return { url, stop: async () => {} };
  } catch {
    console.log(`[postgres] ${new URL(url).host} unreachable: using an embedded Postgres`);
    return startPostgres({ home: resolve(home, 'test') });
  } finally {
    await probe.end();
  }
}

const quietLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

/**
 * The fault tests terminate Postgres backends mid-transaction; unpatched postgres.js then throws
 * from a timer and takes the test process down with an error that names neither. `npm ci` applies
 * patches/ (postinstall); an install that skipped scripts did not, so say so before anything runs.
 */
function requirePatchedPostgres() {
  // The package's CommonJS entry is cjs/src/index.js; the ESM build Drydock imports is src/.
  const root = resolve(dirname(createRequire(import.meta.url).resolve('postgres')), '../..');
  for (const build of ['src', 'cjs/src']) {
    const connection = resolve(root, build, 'connection.js');
    if (!readFileSync(connection, 'utf8').includes('Drydock patch')) {
      throw new Error(`postgres.js is not patched (${connection}): run 'npx patch-package' (npm ci does it)`);
    }
  }
}
