import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { freePort } from '../../scripts/services/process';
import { nodeCommands } from '../../db/schema';
import { createToken } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { answered, answeredMore, longPollWaiting } from '../support/witnesses';
import { useAgentBench } from './agent-process';

const h = useHarness({ worker: false, heartbeats: { flushEveryMs: 60_000, sessionTimeoutMs: 2_000 } });
const bench = useAgentBench(h);

const node = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;
/** A heartbeat the API refused as blocked. */
const REFUSED_HEARTBEAT = { method: 'POST', route: '/v1/agent/heartbeat', status: 403 };

/** Joins a machine through the real binary; returns its data directory, node id and credential. */
async function joined(poolId: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const token = await createToken(h, { poolId });
  const dir = bench.dataDir();
  const run = await bench.agent([
    'join',
    '--api',
    bench.api,
    '--token',
    token.secret,
    '--data-dir',
    dir,
    '--json',
  ]);
  if (run.code !== 0) throw new Error(`join failed: ${run.stderr}`);
  const identity = JSON.parse(readFileSync(join(dir, 'identity.json'), 'utf8'));
  return { dir, nodeId: identity.nodeId as string, credential: identity.credential as string };
}

/** Listens on `port` and resets every connection at once, counting them. */
async function connectionCutter(port: number) {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `drydock-agent run` with a fast heartbeat, once its node is connected. */
async function running(dir: string, nodeId: string) {
  const agent = bench.spawnAgent(['run', '--data-dir', dir, '--heartbeat-every', '300ms']);
  await eventually(async () => (await node(nodeId)).connectivity === 'connected', 15_000);
  await agent.waitForLog(/connected to .* as node_/);
  return agent;
}

/** The node's last-seen time after flushing this API process's heartbeats. */
async function lastSeen(nodeId: string): Promise<number> {
  await h.deps.heartbeats.flush();
  return Date.parse((await node(nodeId)).lastSeenAt);
}

describe('drydock-agent run and stop', () => {
  it('heartbeats (connected, node.connected, last-seen moves); stop says goodbye (offline, node.disconnected)', async () => {
    const { dir, nodeId } = await joined('pool-run');
    expect(await node(nodeId)).toMatchObject({ connectivity: 'disconnected', lastSeenAt: null });
    const agent = await running(dir, nodeId);
    expect(await node(nodeId)).toMatchObject({ connectivity: 'connected', liveness: 'alive' });
    expect(await eventsOf(h, nodeId, 'node.connected')).toHaveLength(1);
    expect(readFileSync(join(dir, 'agent.pid'), 'utf8').trim()).toBe(String(agent.child.pid));

    const seen = await lastSeen(nodeId);
    await eventually(async () => (await lastSeen(nodeId)) > seen);
    // A second `run` on the same data directory is refused while the first runs.
    const second = await bench.agent(['run', '--data-dir', dir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`an agent already runs for this data directory (pid ${agent.child.pid})`);

    const stopped = await bench.agent(['stop', '--data-dir', dir]);
    expect(stopped).toMatchObject({ code: 0, stdout: 'offline\n' });
    expect(await agent.exited).toBe(0);
    expect(existsSync(join(dir, 'agent.pid'))).toBe(false);
    expect(await node(nodeId)).toMatchObject({ connectivity: 'disconnected', liveness: 'offline' });
    expect(await eventsOf(h, nodeId, 'node.disconnected')).toMatchObject([{ data: { reason: 'goodbye' } }]);
    // No heartbeat of the stopped agent lands after the goodbye: the API has answered all it got.
    await bench.idle();
    expect(await node(nodeId)).toMatchObject({ connectivity: 'disconnected', liveness: 'offline' });
    expect(await eventsOf(h, nodeId, 'node.connected')).toHaveLength(1);

    // Stop without a running agent just says goodbye; --json says what it did.
    const again = await bench.agent(['--json', 'stop', '--data-dir', dir]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ nodeId, state: 'offline', stoppedPid: null });
  });

  it('block: the session closes within 2 s and calls get 403 while the agent retries; unblock: back within 10 s', async () => {
    const { dir, nodeId, credential } = await joined('pool-block');
    const agent = await running(dir, nodeId);
    const mark = agent.stderr().length;
    const blockedAt = Date.now();
    const blocked = await call(h, 'POST', `/v1/nodes/${nodeId}/block`, {
      body: { reason: 'security review' },
    });
    expect(blocked.status).toBe(200);
    await agent.waitForLog(/blocked by the control plane; retrying/, 2_000, mark);
    expect(Date.now() - blockedAt).toBeLessThan(2_000);
    expect((await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: {} })).status).toBe(403);

    // While blocked its heartbeats count for nothing, it keeps running, and it says so once.
    const seenBlocked = await lastSeen(nodeId);
    const refused = await answered(bench.api, REFUSED_HEARTBEAT);
    await answeredMore(bench.api, REFUSED_HEARTBEAT, refused, 3);
    expect(await lastSeen(nodeId)).toBe(seenBlocked);
    expect(agent.child.exitCode).toBeNull();
    expect(agent.stderr().match(/blocked by the control plane/g)).toHaveLength(1);

    const unblockedAt = Date.now();
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/unblock`)).status).toBe(200);
    await eventually(async () => (await lastSeen(nodeId)) > seenBlocked, 10_000, 100);
    expect(Date.now() - unblockedAt).toBeLessThan(10_000);
    await agent.waitForLog(/unblocked: the control plane accepts this node again/, 5_000, mark);
    expect(agent.child.exitCode).toBeNull();
  });

  it('an unreachable API: retries with capped backoff, says so once, and stops cleanly', async () => {
    const { dir, nodeId } = await joined('pool-down');
    const port = await freePort();
    const agent = bench.spawnAgent([
      'run',
      '--data-dir',
      dir,
      '--api',
      `http://127.0.0.1:${port}`,
      '--heartbeat-every',
      '300ms',
    ]);
    await agent.waitForLog(/cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); retrying/);
    // From now on the port cuts every connection it accepts: each retry is counted, none answered.
    const cutter = await connectionCutter(port);
    try {
      await eventually(async () => cutter.connections >= 4, 10_000);
    } finally {
      await cutter.close();
    }
    expect(agent.child.exitCode).toBeNull();
    expect(agent.stderr().match(/cannot reach/g)).toHaveLength(1);
    expect((await node(nodeId)).connectivity).toBe('disconnected');
    // `stop` signals it (it exits 0 at once, backoff or not) and says goodbye through the joined API.
    const stopped = await bench.agent(['stop', '--data-dir', dir]);
    expect(stopped).toMatchObject({ code: 0, stdout: 'offline\n' });
    expect(await agent.exited).toBe(0);
    expect((await node(nodeId)).liveness).toBe('offline');
  });

  it('revoke-identity: the running agent exits 3 within seconds, and does not spin', async () => {
    const { dir, nodeId } = await joined('pool-revoke');
    const agent = await running(dir, nodeId);
    const revokedAt = Date.now();
    expect(
      (await call(h, 'POST', `/v1/nodes/${nodeId}/revoke-identity`, { body: { reason: 'key leaked' } }))
        .status,
    ).toBe(200);
    expect(await agent.exited).toBe(3);
    expect(Date.now() - revokedAt).toBeLessThan(3_000);
    expect(agent.stderr()).toMatch(/error: the node identity is no longer valid \(.*\); join again/);
    expect(existsSync(join(dir, 'agent.pid'))).toBe(false);

    // Started again, it exits at once with the same answer.
    const again = await bench.agent(['run', '--data-dir', dir, '--heartbeat-every', '300ms']);
    expect(again.code).toBe(3);
    // stop cannot say goodbye for a revoked identity either.
    expect((await bench.agent(['stop', '--data-dir', dir])).code).toBe(3);
  });

  it('without --config refuses every remediate command, saying so, and records it in the journal; answers a journaled command from the journal', async () => {
    const { dir, nodeId } = await joined('pool-cmd');
    const agent = await running(dir, nodeId);
    const id = newId('cmd');
    await h.db.insert(nodeCommands).values({ id, nodeId, kind: 'remediate', action: 'reboot' });
    // Inserted straight into the table, nothing wakes the long-poll: its periodic re-check finds it.
    const command = await eventually(async () => {
      const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id));
      return row?.status === 'refused' ? row : undefined;
    }, 10_000);
    const reason = 'no action reboot is configured on this node (configured: none)';
    expect(command).toMatchObject({ refuseReason: reason });
    await agent.waitForLog(
      new RegExp(`command ${id} \\(remediate\\) refused: no action reboot is configured`),
    );
    const journal = () =>
      readFileSync(join(dir, 'journal.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    expect(journal()).toEqual([
      {
        id,
        kind: 'remediate',
        outcome: 'refused',
        reason,
        at: expect.any(String),
      },
    ]);
    expect((await bench.agent(['stop', '--data-dir', dir])).code).toBe(0);
    expect(await agent.exited).toBe(0);

    // A command whose outcome was journaled but never reached the API (the agent died between the
    // two) is answered from the journal when it comes again: not carried out, not journaled twice.
    const second = newId('cmd');
    await h.db.insert(nodeCommands).values({ id: second, nodeId, kind: 'purge' });
    const recorded = {
      id: second,
      kind: 'purge',
      outcome: 'refused',
      reason: 'recorded before a crash',
      at: new Date().toISOString(),
    };
    appendFileSync(join(dir, 'journal.jsonl'), `${JSON.stringify(recorded)}\n`);
    const restarted = await running(dir, nodeId);
    await restarted.waitForLog(
      new RegExp(`command ${second} \\(purge\\) refused: recorded before a crash`),
      10_000,
    );
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, second));
    expect(row).toMatchObject({ status: 'refused', refuseReason: 'recorded before a crash' });
    expect(journal()).toEqual([expect.objectContaining({ id }), recorded]);

    // A command enqueued with a wake-up (as the API does) is answered at once: once the agent's
    // long-poll waits again (a wake-up before that finds no one to wake).
    await longPollWaiting(h.deps.wakeups, nodeId);
    const third = newId('cmd');
    const enqueuedAt = Date.now();
    await h.db
      .insert(nodeCommands)
      .values({ id: third, nodeId, kind: 'remediate', action: 'reset-accelerator' });
    h.deps.wakeups.wake(nodeId);
    await restarted.waitForLog(new RegExp(`command ${third} \\(remediate\\) refused`), 5_000);
    expect(Date.now() - enqueuedAt).toBeLessThan(2_000);
    expect(journal().map((e) => e.id)).toEqual([id, second, third]);
  });
});
