import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createLivenessActivities } from '../../activities/liveness';
import { Heartbeats } from '../../api/heartbeats';
import { createDb } from '../../db/client';
import { silentLogger } from '../../observability/log';
import { newId } from '../../domain/ids';
import type { LivenessSettings } from '../../domain/liveness';
import { controllerState, nodeCommands, nodes } from '../../db/schema';
import { livenessProgressQuery } from '../../workflows/definitions';
import { ensureLivenessSweep } from '../../workflows/liveness-client';
import { joinedNode } from '../support/agents';
import { preview } from '../support/decommission';
import { heartbeat, joinedPoolNode, placeAllocation, readNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';

const SETTINGS: LivenessSettings = {
  sweepEveryMs: 250,
  leaseMs: 2_000,
  sessionTimeoutMs: 1_000,
  outageMs: 60_000,
  graceMs: 60_000,
};

const h = useHarness({ heartbeats: { flushEveryMs: 200, sessionTimeoutMs: SETTINGS.sessionTimeoutMs } });

const node = (id: string) => readNode(h, id);

/** This file's liveness controller (the task queue is known once the harness has started). */
const sweepWorkflowId = () => `liveness-${h.taskQueue}`;

/**
 * Ends this file's liveness controller and waits out a sweep still in flight in the worker: the
 * tests after it sweep by hand, and a sweep of the controller's between their steps would race them.
 */
async function stopSweeping(): Promise<void> {
  await h.temporal.workflow.getHandle(sweepWorkflowId()).terminate('the next tests sweep by hand');
  await eventually(async () => h.worker!.getStatus().numInFlightNonLocalActivities === 0);
}

/** Resolves once a liveness sweep has committed that started after `at`. */
async function sweptAfter(at: Date): Promise<void> {
  await eventually(async () => {
    const [last] = await h.db
      .select()
      .from(controllerState)
      .where(eq(controllerState.key, 'liveness.last-sweep'));
    return last !== undefined && last.at > at;
  }, 6_000);
}

describe('heartbeats and liveness', () => {
  it('connects on the first heartbeat, flushes last-seen in batches, and says goodbye as offline', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-hb');
    expect(await node(nodeId)).toMatchObject({ connectivity: 'disconnected', lastSeenAt: null });
    await heartbeat(h, credential);
    await heartbeat(h, credential);
    expect(await node(nodeId)).toMatchObject({ connectivity: 'connected', liveness: 'alive' });
    expect(await eventsOf(h, nodeId, 'node.connected')).toHaveLength(1);
    const seen: string = await eventually(async () => (await node(nodeId)).lastSeenAt ?? undefined);
    // The next heartbeat must be later than the one flushed.
    await eventually(async () => Date.now() > Date.parse(seen));
    await heartbeat(h, credential);
    await h.deps.heartbeats.flush();
    expect(Date.parse((await node(nodeId)).lastSeenAt)).toBeGreaterThan(Date.parse(seen));
    // Flushing does not count as a control change.
    const version = (await node(nodeId)).version;
    await heartbeat(h, credential);
    await h.deps.heartbeats.flush();
    expect((await node(nodeId)).version).toBe(version);

    await heartbeat(h, credential, 'offline');
    expect(await node(nodeId)).toMatchObject({ connectivity: 'disconnected', liveness: 'offline' });
    expect(await eventsOf(h, nodeId, 'node.disconnected')).toMatchObject([{ data: { reason: 'goodbye' } }]);
  });

  it('tells onFlush how many nodes each flush wrote and how long it took; nothing pending, no call', async () => {
    const a = await joinedPoolNode(h, 'pool-hf');
    const b = await joinedNode(h, 'pool-hf');
    const flushes: { rows: number; durationMs: number }[] = [];
    const heartbeats = new Heartbeats(h.db, { onFlush: (f) => flushes.push(f) });
    await heartbeats.beat(a.nodeId, 'running');
    await heartbeats.beat(b.nodeId, 'running');
    await heartbeats.beat(a.nodeId, 'running');
    await heartbeats.flush();
    await heartbeats.flush();
    expect(flushes).toEqual([{ rows: 2, durationMs: expect.any(Number) as number }]);
    expect(flushes[0]!.durationMs).toBeGreaterThan(0);
  });

  it('a flush that fails keeps its times for the next flush', async () => {
    const a = await joinedPoolNode(h, 'pool-hr');
    // A pool whose statements give up on a lock after 200 ms (a startup parameter in the URL).
    const separator = h.databaseUrl.includes('?') ? '&' : '?';
    const pool = createDb(`${h.databaseUrl}${separator}lock_timeout=200`, { max: 1 });
    try {
      const heartbeats = new Heartbeats(pool.db);
      const first = Date.now();
      await heartbeats.beat(a.nodeId, 'running', first);
      expect(heartbeats.beat(a.nodeId, 'running', first + 500)).toBeUndefined();
      // The node's row held by another transaction: the flush's update waits past its lock timeout.
      await h.db.transaction(async (tx) => {
        await tx.execute(sql`select 1 from nodes where id = ${a.nodeId} for update`);
        await expect(heartbeats.flush()).rejects.toThrow();
      });
      await heartbeats.flush();
      const [row] = await h.db
        .select({ lastSeenAt: nodes.lastSeenAt })
        .from(nodes)
        .where(eq(nodes.id, a.nodeId));
      expect(row!.lastSeenAt).toEqual(new Date(first + 500));
    } finally {
      await pool.close();
    }
  });

  it('a timed flush that fails is tried again within a second, not a whole interval later', async () => {
    const a = await joinedPoolNode(h, 'pool-hretry');
    const separator = h.databaseUrl.includes('?') ? '&' : '?';
    const pool = createDb(`${h.databaseUrl}${separator}lock_timeout=200`, { max: 1 });
    const failed: number[] = [];
    const flushed: number[] = [];
    const log = silentLogger();
    log.warn = (() => void failed.push(Date.now())) as typeof log.warn;
    const heartbeats = new Heartbeats(pool.db, {
      flushEveryMs: 3_000,
      log,
      onFlush: () => void flushed.push(Date.now()),
    });
    try {
      await heartbeats.beat(a.nodeId, 'running');
      expect(heartbeats.beat(a.nodeId, 'running')).toBeUndefined();
      // The node's row held past the pool's lock timeout: the first timed flush fails.
      await h.db.transaction(async (tx) => {
        await tx.execute(sql`select 1 from nodes where id = ${a.nodeId} for update`);
        heartbeats.start();
        await eventually(async () => failed.length > 0, 10_000);
      });
      await eventually(async () => flushed.length > 0, 10_000);
      // Written by the retry a second later; the next interval would have come round ~2.8 s later.
      expect(flushed[0]! - failed[0]!).toBeLessThan(2_000);
    } finally {
      await heartbeats.stop();
      await pool.close();
    }
  });

  it('a node a sweep closed while its beats could not be written comes back with its next beat', async () => {
    const a = await joinedPoolNode(h, 'pool-hc');
    const heartbeats = new Heartbeats(h.db, { sessionTimeoutMs: 60_000 });
    const first = Date.now();
    await heartbeats.beat(a.nodeId, 'running', first);
    expect(await node(a.nodeId)).toMatchObject({ connectivity: 'connected', liveness: 'alive' });
    // As a sweep leaves it after an outage that held this process's flushes back: session closed,
    // unreachable, out of placement — while the agent goes on beating here, its session live.
    await setNode(h, a.nodeId, {
      connectivity: 'disconnected',
      liveness: 'unreachable',
      unreachableSince: new Date(),
      noScheduleReasons: ['unreachable'],
    });
    expect(heartbeats.beat(a.nodeId, 'running', first + 1_000)).toBeUndefined();
    await heartbeats.flush();
    // The flush writes the time only; the next beat starts a new session and the node is back.
    expect(await node(a.nodeId)).toMatchObject({ liveness: 'unreachable' });
    await heartbeats.beat(a.nodeId, 'running', first + 2_000);
    expect(await node(a.nodeId)).toMatchObject({
      connectivity: 'connected',
      liveness: 'alive',
      noScheduleReasons: [],
    });
    expect(await eventsOf(h, a.nodeId, 'node.connected')).toHaveLength(2);
    // A node connected and alive is left to its session: its next beats connect nothing.
    expect(heartbeats.beat(a.nodeId, 'running', first + 3_000)).toBeUndefined();
    await heartbeats.flush();
    expect(heartbeats.beat(a.nodeId, 'running', first + 4_000)).toBeUndefined();
  });

  it('a silent node is disconnected, then unreachable after the lease; a heartbeat brings it back', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-lv');
    const alloc = await allocate(h, nodeId, 'acme');
    const command = newId('cmd');
    await h.db.insert(nodeCommands).values({ id: command, nodeId, kind: 'remediate', action: 'reboot' });
    await ensureLivenessSweep(h.temporal, h.taskQueue, {
      settings: SETTINGS,
      workflowId: sweepWorkflowId(),
    });

    await heartbeat(h, credential);
    const lastBeat = Date.now();
    await h.deps.heartbeats.flush();
    const unreachable = await eventually(async () => {
      const n = await node(nodeId);
      return n.liveness === 'unreachable' ? n : undefined;
    }, 6_000);
    const after = Date.now() - lastBeat;
    expect(after).toBeGreaterThanOrEqual(SETTINGS.leaseMs);
    expect(after).toBeLessThan(SETTINGS.leaseMs + 4 * SETTINGS.sweepEveryMs + 1_000);
    expect(unreachable).toMatchObject({ connectivity: 'disconnected', noScheduleReasons: ['unreachable'] });
    expect(unreachable.conditions).toMatchObject([
      { type: 'NodeUnreachable', status: true, reason: 'HeartbeatTimeout' },
    ]);
    expect((await eventsOf(h, nodeId)).map((e) => e.type).slice(-3)).toEqual([
      'node.connected',
      'node.disconnected',
      'node.unreachable',
    ]);
    // Nothing is released by silence: the allocation and the queued command stay.
    const placed = await placeAllocation(h, nodeId);
    expect(placed.body.error.details.reasons).toContain('unreachable');
    const [cmd] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, command));
    expect(cmd?.status).toBe('pending');
    const release = await call(h, 'GET', `/v1/nodes/${nodeId}`);
    expect(release.status).toBe(200);
    const open = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
    expect(open[0]?.liveness).toBe('unreachable');
    expect((await call(h, 'POST', `/v1/allocations/${alloc}/release`)).status).toBe(200);

    await heartbeat(h, credential);
    expect(await node(nodeId)).toMatchObject({
      liveness: 'alive',
      connectivity: 'connected',
      noScheduleReasons: [],
      conditions: [],
    });
  });

  it('a node that joined but never heartbeated counts from its certificate; lost only where the pool says', async () => {
    await seedPool(h, { id: 'pool-cloud', tenantId: 'acme', kind: 'provider', policy: { lostAfter: '1s' } });
    await seedPool(h, {
      id: 'pool-metal',
      tenantId: 'acme',
      kind: 'bare-metal',
      policy: { lostAfter: '1s' },
    });
    // Before the join: its certificate is issued after this, so its lease ends no sooner than one
    // lease from here (taken after both joins, a slow second join made the bound too late).
    const joiningAt = Date.now();
    const cloud = await joinedNode(h, 'pool-cloud');
    const metal = await joinedNode(h, 'pool-metal');
    await ensureLivenessSweep(h.temporal, h.taskQueue, {
      settings: SETTINGS,
      workflowId: sweepWorkflowId(),
    });
    await eventually(async () => (await node(cloud.nodeId)).liveness === 'unreachable', 6_000);
    expect(Date.now() - joiningAt).toBeGreaterThanOrEqual(SETTINGS.leaseMs - 100);
    await eventually(async () => (await node(cloud.nodeId)).liveness === 'lost', 6_000);
    expect(await eventsOf(h, cloud.nodeId, 'node.lost')).toHaveLength(1);
    // Bare metal is never lost: a sweep after its lostAfter had passed left it unreachable.
    const since = await eventually(async () => {
      const [row] = await h.db.select().from(nodes).where(eq(nodes.id, metal.nodeId));
      return row?.unreachableSince ?? undefined;
    }, 6_000);
    await sweptAfter(new Date(since.getTime() + 1_000));
    expect((await node(metal.nodeId)).liveness).toBe('unreachable');
    expect(await eventsOf(h, metal.nodeId, 'node.lost')).toEqual([]);
    const sweep = await h.temporal.workflow.getHandle(sweepWorkflowId()).query(livenessProgressQuery);
    expect(sweep.sweeps).toBeGreaterThan(3);
    await recordHistory(h.temporal, sweepWorkflowId(), 'liveness-sweep');
    await stopSweeping();
  });
});

describe('a sweep that changes many nodes', () => {
  it('writes each its own columns and one version bump, whatever else it holds; a connected node past its lease loses its session too', async () => {
    await seedPool(h, { id: 'pool-many', tenantId: 'acme', kind: 'provider', policy: { lostAfter: '1s' } });
    const silent = await Promise.all([1, 2, 3].map(() => joinedNode(h, 'pool-many')));
    const gone = await joinedNode(h, 'pool-many');
    const other = { type: 'GpuXid', status: true, reason: 'Xid79', since: new Date(0).toISOString() };
    const seenAt = new Date(Date.now() - 60_000);
    for (const { nodeId } of silent) {
      await setNode(h, nodeId, {
        connectivity: 'connected',
        lastSeenAt: seenAt,
        conditions: [other],
        noScheduleReasons: ['condition:GpuXid'],
      });
    }
    await setNode(h, gone.nodeId, {
      liveness: 'unreachable',
      lastSeenAt: seenAt,
      unreachableSince: new Date(Date.now() - 10_000),
      noScheduleReasons: ['unreachable'],
    });
    const before = new Map(
      (await h.db.select().from(nodes)).map((n) => [n.id, { version: n.version, updatedAt: n.updatedAt }]),
    );

    await createLivenessActivities(h.db).sweepLiveness(SETTINGS);
    const after = new Map((await h.db.select().from(nodes)).map((n) => [n.id, n]));
    for (const { nodeId } of silent) {
      const n = after.get(nodeId)!;
      expect(n).toMatchObject({
        liveness: 'unreachable',
        connectivity: 'disconnected',
        noScheduleReasons: ['condition:GpuXid', 'unreachable'],
        conditions: [other, { type: 'NodeUnreachable', status: true, reason: 'HeartbeatTimeout' }],
        version: before.get(nodeId)!.version + 1,
      });
      expect(n.unreachableSince).toBeInstanceOf(Date);
      expect(n.updatedAt.getTime()).toBeGreaterThan(before.get(nodeId)!.updatedAt.getTime());
      // It was connected: the one sweep that found it past its lease closed its session as well.
      const swept = (await eventsOf(h, nodeId)).filter((e) => e.actor === 'system:liveness');
      expect(swept).toEqual([
        expect.objectContaining({ type: 'node.disconnected', data: { reason: 'no-session' } }),
        expect.objectContaining({ type: 'node.unreachable', data: { lastSeenAt: seenAt.toISOString() } }),
      ]);
    }
    expect(after.get(gone.nodeId)).toMatchObject({
      liveness: 'lost',
      connectivity: 'disconnected',
      noScheduleReasons: ['unreachable'],
      version: before.get(gone.nodeId)!.version + 1,
    });
    expect(await eventsOf(h, gone.nodeId, 'node.lost')).toEqual([
      expect.objectContaining({ actor: 'system:liveness', data: {} }),
    ]);
    // The sweep appended all of these nodes' events in one statement: the history a decommission
    // would retain still counts each node's own.
    for (const { nodeId } of [...silent, gone]) {
      const { retained } = (await preview(h, nodeId)).body;
      expect(retained).toContainEqual({ kind: 'events', count: (await eventsOf(h, nodeId)).length });
    }
  });
});

describe('grace after an outage', () => {
  it('after a gap in sweeps longer than the threshold, ages do not count until the grace ends', async () => {
    const { nodeId } = await joinedPoolNode(h, 'pool-g');
    await setNode(h, nodeId, { lastSeenAt: new Date(Date.now() - 60_000) });
    const { sweepLiveness } = createLivenessActivities(h.db);
    const settings = { ...SETTINGS, outageMs: 20_000, graceMs: 300_000 };
    await h.db
      .insert(controllerState)
      .values({ key: 'liveness.last-sweep', at: new Date(Date.now() - 30_000) })
      .onConflictDoUpdate({ target: controllerState.key, set: { at: new Date(Date.now() - 30_000) } });
    const first = await sweepLiveness(settings);
    expect(first.unreachable).toBe(0);
    expect(Date.parse(first.graceUntil!)).toBeGreaterThan(Date.now() + 290_000);
    expect((await node(nodeId)).liveness).toBe('alive');
    // A sweep right after is no new outage: the grace holds.
    expect((await sweepLiveness(settings)).unreachable).toBe(0);
    // Once the grace has passed, the old age counts.
    await h.db
      .update(controllerState)
      .set({ at: new Date(Date.now() - 1_000) })
      .where(eq(controllerState.key, 'liveness.grace-until'));
    const after = await sweepLiveness(settings);
    expect(after.unreachable).toBeGreaterThanOrEqual(1);
    expect((await node(nodeId)).liveness).toBe('unreachable');
  });
});
