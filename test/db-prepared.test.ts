import net from 'node:net';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createDb } from '../db/client';
import { withPreparedStatements } from '../db/prepared';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });

/** Socket writes this process makes while `fn` runs: postgres.js writes once per round trip it waits on. */
async function writesDuring(fn: () => Promise<unknown>): Promise<number> {
  const write = net.Socket.prototype.write;
  let writes = 0;
  net.Socket.prototype.write = function (this: net.Socket, ...args: Parameters<typeof write>) {
    writes++;
    return write.apply(this, args);
  } as typeof write;
  try {
    await fn();
  } finally {
    net.Socket.prototype.write = write;
  }
  return writes;
}

describe('withPreparedStatements (db/prepared.ts)', () => {
  const pools: ReturnType<typeof createDb>[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });
  /** A pool of one connection, so every statement below shares the statements it prepared. */
  const onePool = () => {
    const pool = createDb(h.databaseUrl, { max: 1 });
    pools.push(pool);
    return pool.db;
  };

  it('sends the statements of a transaction together once prepared: BEGIN, one round trip, COMMIT', async () => {
    const db = onePool();
    const three = (on: typeof db) =>
      on.transaction((tx) =>
        Promise.all([1, 2, 3].map((i) => tx.execute<{ x: number }>(sql`select ${i}::int as x`))),
      );
    const prepared = withPreparedStatements(db);
    await three(prepared); // describes each statement once on this connection
    let answers: Awaited<ReturnType<typeof three>> = [];
    expect(await writesDuring(async () => (answers = await three(prepared)))).toBe(3);
    expect(answers.map((rows) => rows[0]!.x)).toEqual([1, 2, 3]);
    // Unprepared, postgres.js describes each one first and sends the next only then.
    expect(await writesDuring(() => three(db))).toBe(8);
  });

  it('keeps transactions whole: a failed statement rolls back the rest, a savepoint only its own', async () => {
    const db = withPreparedStatements(onePool());
    await db.execute(sql`create temporary table prepared_probe (n int primary key)`);
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`insert into prepared_probe values (${1})`);
        await tx.execute(sql`insert into prepared_probe values (${1})`);
      }),
    ).rejects.toThrow();
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into prepared_probe values (${2})`);
      await expect(
        tx.transaction(async (inner) => {
          await inner.execute(sql`insert into prepared_probe values (${3})`);
          throw new Error('roll the savepoint back');
        }),
      ).rejects.toThrow('roll the savepoint back');
    });
    const rows = await db.execute<{ n: number }>(sql`select n from prepared_probe order by n`);
    expect(rows.map((r) => r.n)).toEqual([2]);
  });
});
