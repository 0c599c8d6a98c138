import { loadConfig } from '../../config';
import { defineCommand, type Command } from '../command';
import { causeChain } from '../../domain/errors';
import { CliError } from '../errors';
import type { Env } from '../../cli-kit/spec';

/**
 * `drydock migrate`: the one command that talks to the database instead of the API. Deploys run it
 * once before the API processes and workers start, which refuse a schema behind their build.
 */

const migrate = defineCommand({
  words: ['migrate'],
  summary:
    'Apply the database migrations to DATABASE_URL once, then exit (talks to the database, not the API)',
  operands: [],
  flags: {},
  async run({ out, env }) {
    const url = databaseUrlOf(env);
    // Loaded here, not with the CLI: the database driver and drizzle are for this command only,
    // and every other command would pay for loading them (drizzle-orm alone: ~120 MB of peak
    // memory and about a second on Node 24).
    const { migrateDatabase } = await import('../../db/migrate');
    const run = await migrateDatabase(url).catch((error: unknown) => {
      throw new CliError('DATABASE', `cannot migrate the database at ${placeOf(url)}: ${rootMessage(error)}`);
    });
    out.result(run, () =>
      run.applied.length === 0
        ? `schema is current (${run.total} migrations)`
        : `applied ${run.applied.length} of ${run.total} migrations: ${run.applied.join(', ')}; schema is current`,
    );
  },
});

function databaseUrlOf(env: Env): string {
  let url: string | undefined;
  try {
    url = loadConfig(env).DATABASE_URL;
  } catch (error) {
    throw new CliError('CONFIG', (error as Error).message);
  }
  if (!url) {
    throw new CliError(
      'CONFIG',
      'DATABASE_URL is not set: drydock migrate applies the migrations to the database it names (postgres://USER:PASSWORD@HOST:5432/DB)',
    );
  }
  return url;
}

/** `host:port/db` of a database URL: enough to say which, without its password. */
function placeOf(url: string): string {
  const { host, pathname } = new URL(url);
  return `${host}${pathname}`;
}

/** The driver's own words: drizzle wraps a failed statement's error, with the SQL, in another. */
function rootMessage(error: unknown): string {
  return causeChain(error).at(-1)?.message ?? String(error);
}

export const migrateCommands: Command[] = [migrate];
