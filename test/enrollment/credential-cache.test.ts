import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { NODE_CHANNEL } from '../../db/wakeups';
import { heartbeat, joinedPoolNode } from '../support/builders';
import { eventually, useHarness } from '../support/harness';
import { inAnotherProcess } from '../support/other-process';

const h = useHarness({ worker: false });

// Changes made in another process reach this one only through Postgres (the triggers of migration
// 0009 on `nodes` and `node_credentials`).

/**
 * Until this process heard every NOTIFY committed so far: one connection delivers them in commit
 * order, so a marker sent now arrives after them all.
 */
async function heardAllNotifies(): Promise<void> {
  const marker = `marker-${randomUUID()}`;
  let heard = false;
  const stop = h.deps.wakeups.subscribe(marker, () => (heard = true));
  try {
    await h.db.execute(sql`select pg_notify(${NODE_CHANNEL}, ${marker})`);
    await eventually(async () => heard, 5_000);
  } finally {
    stop();
  }
}

/** An agent whose credential this process holds: joined, connected (a change), then seen again. */
async function warmAgent(pool: string) {
  const agent = await joinedPoolNode(h, pool);
  expect((await heartbeat(h, agent.credential)).status).toBe(200);
  await heardAllNotifies();
  expect((await heartbeat(h, agent.credential)).status).toBe(200);
  return agent;
}

describe('the node credential cache', () => {
  it('forgets a node as soon as another process commits a change to it, whatever wrote it', async () => {
    const { nodeId, credential } = await warmAgent('pool-cache-a');
    // Armed first: the wait ends on the NOTIFY the commit sends (or fails the test after 5 s).
    const woken = h.deps.wakeups.arm(nodeId);
    await inAnotherProcess(
      h,
      (sql) => sql`update nodes set access = 'blocked', version = version + 1 where id = ${nodeId}`,
    );
    const started = Date.now();
    await woken.wait(5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    const beat = await heartbeat(h, credential);
    expect(beat.status).toBe(403);
    expect(beat.body.error.details).toMatchObject({ access: 'blocked' });
  });

  it('refuses a credential revoked by another process at once', async () => {
    const { nodeId, credential } = await warmAgent('pool-cache-b');
    const woken = h.deps.wakeups.arm(nodeId);
    await inAnotherProcess(
      h,
      (sql) => sql`update node_credentials set revoked_at = now() where node_id = ${nodeId}`,
    );
    const started = Date.now();
    await woken.wait(5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await heartbeat(h, credential)).status).toBe(401);
  });

  it('forgets everything when its LISTEN reconnects: NOTIFYs sent meanwhile are lost', async () => {
    const { nodeId, credential } = await warmAgent('pool-cache-d');
    await inAnotherProcess(h, async (sql) => {
      // A change whose NOTIFY nobody hears: triggers off for this session, as if sent while the
      // listening connection was down.
      await sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`;
        await tx`update nodes set access = 'blocked', version = version + 1 where id = ${nodeId}`;
      });
      expect((await heartbeat(h, credential)).status).toBe(200);
      await sql`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike 'listen%' and pid <> pg_backend_pid()`;
    });
    await eventually(async () => (await heartbeat(h, credential)).status === 403, 5_000);
  });
});
