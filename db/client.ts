import { readFileSync } from 'node:fs';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { certificateSummary } from '../private-key-file';
import * as schema from './schema';

export type Db = ReturnType<typeof createDb>['db'];
/** A transaction handle; every helper that writes takes one. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

/** A pooled connection and its drizzle handle. */
export function createDb(url: string, options: { max?: number } = {}) {
  const sql = postgresClient(url, { max: options.max ?? 10 });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}

/** A postgres.js client for `url`, its TLS as `postgresTls` reads it: every connection Drydock opens. */
export function postgresClient(url: string, options: postgres.Options<Record<string, never>> = {}) {
  const tls = postgresTls(url);
  return postgres(tls.url, { onnotice: () => {}, ...options, ...(tls.ca ? { ssl: { ca: tls.ca } } : {}) });
}

/**
 * `url`'s TLS, read as libpq reads it (docs/production.md): `sslmode=verify-full&sslrootcert=FILE`
 * verifies the server's certificate against the CA in FILE and its name against the URL's host.
 * postgres.js knows `sslmode` (and `sslrootcert=system`) but not a CA file: it would send
 * `sslrootcert` to the server as a setting. So the file is read here and the parameter taken out.
 */
export function postgresTls(url: string): { url: string; ca?: Buffer; caFile?: string } {
  const [base, query] = url.split('?', 2) as [string, string | undefined];
  const params = new URLSearchParams(query ?? '');
  const caFile = params.get('sslrootcert');
  if (caFile === null || caFile === 'system') return { url };
  if (params.get('sslmode') !== 'verify-full') {
    throw new Error(
      `invalid configuration: DATABASE_URL names sslrootcert=${caFile} with sslmode=${params.get('sslmode') ?? '(unset)'}: ` +
        'a CA file takes sslmode=verify-full',
    );
  }
  params.delete('sslrootcert');
  let ca: Buffer;
  try {
    ca = readFileSync(caFile);
  } catch (error) {
    throw new Error(`invalid configuration: DATABASE_URL's sslrootcert: ${(error as Error).message}`);
  }
  return { url: `${base}?${params.toString()}`, ca, caFile };
}

/** What a start-up logs of its link to Postgres: where, whether over TLS, the CA's fingerprint. */
export function postgresLinkSummary(url: string): Record<string, unknown> {
  const tls = postgresTls(url);
  // Host, port and database only: the credentials are the URL's user info.
  const [place = '', query] = tls.url.replace(/^[a-z]+:\/\/([^@/]*@)?/, '').split('?', 2);
  return {
    address: place,
    tls: new URLSearchParams(query ?? '').get('sslmode') ?? false,
    ...(tls.ca ? { ca: certificateSummary(tls.ca) } : {}),
  };
}
