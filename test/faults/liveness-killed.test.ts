import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { LivenessSettings } from '../../domain/liveness';
import { controllerState, nodes } from '../../db/schema';
import { livenessProgressQuery } from '../../workflows/definitions';
import { ensureLivenessSweep } from '../../workflows/liveness-client';
import { joinedNode } from '../support/agents';
import { heartbeat, setNode } from '../support/builders';
import { seedPool } from '../support/fixtures';
import { eventually, useHarness, type Harness } from '../support/harness';
import { nodeOutcome } from '../support/step-faults';
import { killWorker, startWorkerProcess, workerExit } from '../support/worker-process';

/**
 * Sweeps far enough apart that the sweep after the one that made the node unreachable is past the
 * pool's `lostAfter`: the node is unreachable at sweep 1 and lost at sweep 2, so "killed after
 * step N" names one commit in every run. Session and lease are long: after its reconnect the node
 * stays connected for the rest of the test; the outage threshold is out of reach, so the dead
 * worker's gap starts no grace period.
 */
const SETTINGS: LivenessSettings = {
  sweepEveryMs: 2_000,
  leaseMs: 60_000,
  sessionTimeoutMs: 30_000,
  outageMs: 10 * 60_000,
  graceMs: 60_000,
};
const LOST_AFTER = '1s';
/** The dead worker's sweep is handed to the fresh one after this (production: 30 s). */
const SWEEP_TIMEOUT_MS = 3_000;
/** A queue no worker polls: the namespace's controller (each worker.ts child starts it) parks there. */
const PARKED_CONTROLLER_QUEUE = 'liveness-controller-parked';
const BOUND_MS = 60_000;

// One database each: a controller sweeps every node of its database, so two in one would race.
// The API's session timeout is short so that the node's heartbeat at the end opens a new session.
const harnesses = [1, 2].map(() => useHarness({ worker: false, heartbeats: { sessionTimeoutMs: 1_000 } }));

async function version(h: Harness, nodeId: string): Promise<number> {
  const [node] = await h.db.select({ version: nodes.version }).from(nodes).where(eq(nodes.id, nodeId));
  return node!.version;
}

/** Resolves once a liveness sweep has committed that started after `at`. */
async function sweptAfter(h: Harness, at: Date): Promise<void> {
  await eventually(
    async () => {
      const [last] = await h.db
        .select()
        .from(controllerState)
        .where(eq(controllerState.key, 'liveness.last-sweep'));
      return last !== undefined && last.at > at;
    },
    BOUND_MS,
    100,
  );
}

/**
 * A connected node of a provider pool, silent for an hour; a worker child process that SIGKILLs
 * itself right after the controller's sweep number `killAfter` has committed, and an in-process
 * worker started once it is dead. The controller must carry on, each change once.
 */
async function sweepKilledAfter(h: Harness, killAfter: 1 | 2) {
  await ensureLivenessSweep(h.temporal, PARKED_CONTROLLER_QUEUE);
  await seedPool(h, {
    id: 'pool-cloud',
    tenantId: 'acme',
    kind: 'provider',
    policy: { lostAfter: LOST_AFTER },
  });
  const { nodeId, credential } = await joinedNode(h, 'pool-cloud');
  expect((await heartbeat(h, credential)).status).toBe(200);
  await h.deps.heartbeats.flush();
  await setNode(h, nodeId, { lastSeenAt: new Date(Date.now() - 3_600_000) });
  const seeded = await version(h, nodeId);
  // The join's and the first heartbeat's events (node.connected among them); silence adds these.
  const joined = (await nodeOutcome(h, nodeId)).events;
  const unreachable = { ...joined, 'node.disconnected': 1, 'node.unreachable': 1 };
  const silent = { ...unreachable, 'node.lost': 1 };

  const workflowId = `liveness-${h.taskQueue}`;
  const child = startWorkerProcess(h, { killAfterStep: { steps: killAfter, workflowId } });
  const replaced = workerExit(child).then(async (signal) => {
    await h.startWorker();
    return signal;
  });
  try {
    await ensureLivenessSweep(h.temporal, h.taskQueue, {
      settings: SETTINGS,
      workflowId,
      sweepTimeoutMs: SWEEP_TIMEOUT_MS,
    });
    const end = await eventually(async () => child.signalCode ?? child.exitCode ?? undefined, BOUND_MS);
    expect(end).toBe('SIGKILL');
    const killedAt = new Date();
    // The kill came right after the commit it was aimed at: sweep 1 made the node unreachable (and
    // closed its session), sweep 2 made it lost.
    expect(await nodeOutcome(h, nodeId)).toEqual({
      events: killAfter === 1 ? unreachable : silent,
      operations: [],
      commands: [],
      node: expect.objectContaining({
        liveness: killAfter === 1 ? 'unreachable' : 'lost',
        connectivity: 'disconnected',
      }) as unknown,
    });
    expect(await version(h, nodeId)).toBe(seeded + killAfter);

    // The fresh worker sweeps again (the dead worker's sweep first, once its timeout has passed).
    await replaced;
    await sweptAfter(h, killedAt);
    await eventually(
      async () => {
        const [node] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
        return node?.liveness === 'lost';
      },
      BOUND_MS,
      100,
    );
    // A sweep that started after the node was lost: it proves the controller looked again.
    await sweptAfter(h, new Date());
    const lost = await nodeOutcome(h, nodeId);
    expect(lost).toEqual({
      events: silent,
      operations: [],
      commands: [],
      node: expect.objectContaining({
        liveness: 'lost',
        connectivity: 'disconnected',
        noScheduleReasons: ['unreachable'],
        deleted: false,
      }) as unknown,
    });
    expect(await version(h, nodeId)).toBe(seeded + 2);
    const progress = await h.temporal.workflow.getHandle(workflowId).query(livenessProgressQuery);
    expect(progress.sweeps).toBeGreaterThan(killAfter);

    // The node comes back: connected once, and a later sweep leaves it so.
    expect((await heartbeat(h, credential)).status).toBe(200);
    await sweptAfter(h, new Date());
    expect(await nodeOutcome(h, nodeId)).toEqual({
      ...lost,
      events: { ...silent, 'node.connected': joined['node.connected']! + 1 },
      node: { ...lost.node, liveness: 'alive', connectivity: 'connected', noScheduleReasons: [] },
    });
    expect(await version(h, nodeId)).toBe(seeded + 3);
  } finally {
    // Not found when the test failed before the controller started: nothing to end then.
    await h.temporal.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => {});
    await killWorker(child);
    await replaced;
  }
}

describe('the liveness controller with its worker killed right after a sweep commit', () => {
  it('carries on after the commit that made a silent node unreachable, and after the one that made it lost; each change once', async () => {
    await Promise.all([sweepKilledAfter(harnesses[0]!, 1), sweepKilledAfter(harnesses[1]!, 2)]);
  }, 150_000);
});
