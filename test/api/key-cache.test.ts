import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { KEYS_CHANNEL } from '../../db/wakeups';
import { call, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { inAnotherProcess } from '../support/other-process';

const h = useHarness({ worker: false });

// Changes made in another process reach this one only through Postgres (the trigger of migration
// 0011 on `api_keys`).

const nodesWith = async (secret: string) => (await call(h, 'GET', '/v1/nodes', { token: secret })).status;

/** A tenant key this process has resolved (and so keeps). */
async function warmKey(name: string) {
  const key = await tenantKey(h, 'acme', ['compute:nodes:read'], name);
  expect(await nodesWith(key.secret)).toBe(200);
  expect(await nodesWith(key.secret)).toBe(200);
  return key;
}

describe('the API key cache', () => {
  it('refuses a key revoked by another process within a second', async () => {
    const key = await warmKey(`cache-a-${randomUUID()}`);
    await inAnotherProcess(h, (other) => other`update api_keys set revoked_at = now() where id = ${key.id}`);
    const started = Date.now();
    await eventually(async () => (await nodesWith(key.secret)) === 401, 5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('refuses a key deleted by another process within a second', async () => {
    const key = await warmKey(`cache-b-${randomUUID()}`);
    await inAnotherProcess(h, (other) => other`delete from api_keys where id = ${key.id}`);
    const started = Date.now();
    await eventually(async () => (await nodesWith(key.secret)) === 401, 5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a grace set by another process ends on time', async () => {
    const key = await warmKey(`cache-c-${randomUUID()}`);
    await inAnotherProcess(
      h,
      (other) => other`update api_keys set revoked_at = now() + interval '1 second' where id = ${key.id}`,
    );
    // The grace holds, then ends: the cached answer is not kept past it.
    await eventually(async () => (await nodesWith(key.secret)) === 401, 5_000);
  });

  it('forgets every key when its LISTEN reconnects: NOTIFYs sent meanwhile are lost', async () => {
    const key = await warmKey(`cache-d-${randomUUID()}`);
    await inAnotherProcess(h, async (other) => {
      // A revocation whose NOTIFY nobody hears: triggers off for this session, as if sent while
      // the listening connection was down.
      await other.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        await tx`update api_keys set revoked_at = now() where id = ${key.id}`;
      });
      // Kept: no lookup saw the revocation.
      expect(await nodesWith(key.secret)).toBe(200);
      await other`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike 'listen%' and pid <> pg_backend_pid()`;
    });
    await eventually(async () => (await nodesWith(key.secret)) === 401, 5_000);
  });

  it('a NOTIFY on the key channel for another key leaves this one working', async () => {
    const key = await warmKey(`cache-e-${randomUUID()}`);
    await h.db.execute(sql`select pg_notify(${KEYS_CHANNEL}, 'key_unrelated')`);
    expect(await nodesWith(key.secret)).toBe(200);
  });
});
