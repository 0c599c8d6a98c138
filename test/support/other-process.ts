import type { Sql } from 'postgres';
import { createDb } from '../../db/client';
import type { Harness } from './harness';

/**
 * Runs `write` on another process's connection to the harness's database: a change made there
 * tells the API process under test nothing unless Postgres does (a trigger's NOTIFY).
 */
export async function inAnotherProcess<T>(h: Harness, write: (other: Sql) => Promise<T>): Promise<T> {
  const other = createDb(h.databaseUrl, { max: 1 });
  try {
    return await write(other.sql);
  } finally {
    await other.close();
  }
}
