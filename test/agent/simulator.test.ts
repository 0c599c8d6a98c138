import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../agent/session';
import { createSimulator, type Simulator } from '../../agent/simulator';
import { closeServer, listen } from '../../api/server';
import { newId } from '../../domain/ids';
import { nodeCommands, nodes } from '../../db/schema';
import { createToken } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness({ worker: false, heartbeats: { flushEveryMs: 60_000, sessionTimeoutMs: 2_000 } });

let server: Server;
let api = '';
const simulators: Simulator[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  const listening = await listen(h.deps, 0);
  server = listening.server;
  api = `http://127.0.0.1:${listening.port}`;
});

afterAll(async () => {
  await Promise.all(simulators.map((s) => s.close()));
  await closeServer(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function simulate(options: Omit<Parameters<typeof createSimulator>[0], 'api'>) {
  const simulator = await createSimulator({ api, heartbeatEveryMs: 300, ...options });
  simulators.push(simulator);
  return simulator;
}

const node = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;

/** Resolves once the API has accepted `count` more heartbeats of the session than it had. */
async function moreHeartbeats(session: AgentSession, count: number): Promise<void> {
  const from = session.heartbeats;
  await eventually(async () => session.heartbeats >= from + count, 5_000);
}

async function lastSeen(ids: string[]): Promise<Map<string, number>> {
  await h.deps.heartbeats.flush();
  const rows = await h.db.select().from(nodes).where(inArray(nodes.id, ids));
  return new Map(rows.map((r) => [r.id, r.lastSeenAt?.getTime() ?? 0]));
}

describe('agent simulator', () => {
  it('joins 20 agents that get connected; pause silences one, resume brings it back, stop says goodbye', async () => {
    await seedPool(h, { id: 'pool-sim', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-sim', labels: { rack: 'r1' } });
    const sim = await simulate({
      token: token.secret,
      count: 20,
      hostnamePrefix: 'sim-gpu',
      inventory: (i) => ({
        accelerators: [{ model: 'H100', serial: `SN-${i}` }],
        storageRoots: [{ path: '/data', bytes: 1_000_000 }],
      }),
    });
    expect(sim.agents).toHaveLength(20);
    expect(sim.agents.map((a) => a.hostname)).toContain('sim-gpu-0001');
    expect(sim.agents.every((a) => a.joined && a.provisionState === 'adopted')).toBe(true);
    const ids = sim.agents.map((a) => a.nodeId);
    await eventually(async () => {
      const rows = await h.db.select().from(nodes).where(inArray(nodes.id, ids));
      return rows.length === 20 && rows.every((r) => r.connectivity === 'connected');
    }, 15_000);
    const first = await node(ids[0]!);
    expect(first.labels).toEqual([
      { key: 'gpu.count', value: '1', source: 'inventory' },
      { key: 'gpu.model', value: 'H100', source: 'inventory' },
      { key: 'rack', value: 'r1', source: 'operator' },
    ]);
    expect(await eventsOf(h, ids[5]!, 'node.connected')).toHaveLength(1);

    const [paused, other, leaving] = ids as [string, string, string];
    await sim.pause(paused);
    expect(sim.agent(paused).session.state).toBe('paused');
    const beatsAtPause = sim.agent(paused).session.heartbeats;
    const before = await lastSeen([paused, other]);
    // Two more heartbeats of another agent: a whole interval in which the paused one would have beaten.
    await moreHeartbeats(sim.agent(other).session, 2);
    const after = await lastSeen([paused, other]);
    expect(after.get(paused)).toBe(before.get(paused));
    expect(after.get(other)).toBeGreaterThan(before.get(other)!);
    expect(sim.agent(paused).session.heartbeats).toBe(beatsAtPause);
    // Silence is not a goodbye: the node is not offline.
    expect((await node(paused)).liveness).toBe('alive');

    sim.resume(paused);
    await eventually(async () => (await lastSeen([paused])).get(paused)! > after.get(paused)!, 5_000);
    expect(sim.agent(paused).session.heartbeats).toBeGreaterThan(beatsAtPause);

    await sim.stop(leaving);
    expect(await node(leaving)).toMatchObject({ connectivity: 'disconnected', liveness: 'offline' });
    expect(await eventsOf(h, leaving, 'node.disconnected')).toMatchObject([{ data: { reason: 'goodbye' } }]);
    const beatsAtGoodbye = sim.agent(leaving).session.heartbeats;
    await moreHeartbeats(sim.agent(other).session, 2);
    expect((await node(leaving)).liveness).toBe('offline');
    expect(sim.agent(leaving).session.state).toBe('stopped');
    expect(sim.agent(leaving).session.heartbeats).toBe(beatsAtGoodbye);
    await sim.close();
  });

  it('onCommand lets simulated agents ack, refuse or ignore; a handler that throws refuses; purge is checked like the real agent does', async () => {
    await seedPool(h, { id: 'pool-simc', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-simc' });
    const sim = await simulate({ token: token.secret, count: 4, hostnamePrefix: 'sim-cmd' });
    const [acks, refuses, ignores, bare] = sim.agents.map((a) => a.nodeId) as [
      string,
      string,
      string,
      string,
    ];
    const seen: string[] = [];
    sim.onCommand('remediate', async (command, context) => {
      seen.push(`${context.nodeId}:${command.action}`);
      if (context.nodeId === acks) return { outcome: 'ack' };
      if (context.nodeId === refuses) return { outcome: 'refuse', reason: `cannot ${command.action}` };
      if (context.nodeId === ignores) return { outcome: 'ignore' };
      throw new Error('no accelerator to reset');
    });
    const enqueue = async (nodeId: string, kind: 'remediate' | 'purge') => {
      const id = newId('cmd');
      await h.db
        .insert(nodeCommands)
        .values({ id, nodeId, kind, action: kind === 'remediate' ? 'reboot' : null });
      h.deps.wakeups.wake(nodeId);
      return id;
    };
    // Behind the ignored command, delivered in the same poll: once the node has answered it, it
    // has gone past the ignored one.
    const ignored = newId('cmd');
    const behindIgnored = newId('cmd');
    const queuedAt = Date.now();
    await h.db.insert(nodeCommands).values([
      { id: ignored, nodeId: ignores, kind: 'remediate', action: 'reboot', createdAt: new Date(queuedAt) },
      { id: behindIgnored, nodeId: ignores, kind: 'purge', createdAt: new Date(queuedAt + 1) },
    ]);
    h.deps.wakeups.wake(ignores);
    const commands = {
      acked: await enqueue(acks, 'remediate'),
      refused: await enqueue(refuses, 'remediate'),
      ignored,
      failed: await enqueue(bare, 'remediate'),
      unsigned: await enqueue(acks, 'purge'),
    };
    const status = async (id: string) => {
      const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id));
      return row!;
    };
    await eventually(
      async () =>
        (await status(commands.unsigned)).status === 'refused' &&
        (await status(commands.failed)).status === 'refused',
      5_000,
    );
    await eventually(async () => (await status(commands.acked)).status === 'acked', 5_000);
    expect(await status(commands.refused)).toMatchObject({
      status: 'refused',
      refuseReason: 'cannot reboot',
    });
    expect(await status(commands.failed)).toMatchObject({
      refuseReason: 'remediate failed: no accelerator to reset',
    });
    // Simulated agents have a purge handler from the start: an unsigned purge is refused.
    expect(await status(commands.unsigned)).toMatchObject({ refuseReason: 'unsigned purge command' });
    await eventually(async () => (await status(behindIgnored)).status === 'refused', 5_000);
    expect((await status(commands.ignored)).status).toBe('pending');
    // Each command reached its handler once.
    expect(seen.filter((s) => s.startsWith(ignores))).toHaveLength(1);
    expect(seen).toHaveLength(4);
    expect(sim.agent(acks).journal.find(commands.acked)).toMatchObject({
      outcome: 'acked',
      kind: 'remediate',
    });
    await sim.close();
  });

  it('keeps identities under dataRoot in the agent data-directory format and reuses them on the next start', async () => {
    await seedPool(h, { id: 'pool-simd', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-simd', maxUses: 3 });
    const root = mkdtempSync(join(tmpdir(), 'drydock-sim-'));
    dirs.push(root);
    const machines = ['vps-01', 'vps-02', 'vps-03'].map((hostname) => ({ hostname, token: token.secret }));
    const first = await simulate({ dataRoot: root, machines });
    const ids = first.agents.map((a) => a.nodeId);
    expect(first.agents.every((a) => a.joined)).toBe(true);
    expect(readdirSync(root).sort()).toEqual(['vps-01', 'vps-02', 'vps-03']);
    expect(readdirSync(join(root, 'vps-01')).sort()).toEqual(['identity.json', 'node.key']);
    expect(statSync(join(root, 'vps-01', 'identity.json')).mode & 0o777).toBe(0o600);
    await first.close();

    // The token is used up: a second start that joined again would fail.
    const second = await simulate({ dataRoot: root, machines });
    expect(second.agents.map((a) => a.nodeId)).toEqual(ids);
    expect(second.agents.some((a) => a.joined)).toBe(false);
    await eventually(async () => (await node(ids[2]!)).connectivity === 'connected', 5_000);
    expect((await call(h, 'GET', '/v1/nodes?poolId=pool-simd')).body.items).toHaveLength(3);
    await second.close();
  });

  it('runs 200 heartbeat-only agents over a few shared keep-alive sockets', async () => {
    await seedPool(h, { id: 'pool-simb', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-simb' });
    const sim = await simulate({
      token: token.secret,
      count: 200,
      hostnamePrefix: 'bench',
      commands: false,
      maxSockets: 8,
      heartbeatEveryMs: 1_000,
    });
    const ids = sim.agents.map((a) => a.nodeId);
    await eventually(async () => {
      const rows = await h.db.select().from(nodes).where(inArray(nodes.id, ids));
      return rows.every((r) => r.connectivity === 'connected');
    }, 20_000);
    const connections = await new Promise<number>((resolve, reject) =>
      server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
    expect(connections).toBeLessThanOrEqual(8);
    await eventually(async () => sim.agents.every((a) => a.session.heartbeats >= 2), 5_000);
  });
});
