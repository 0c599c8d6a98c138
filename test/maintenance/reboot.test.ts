import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../agent/simulator';
import { readNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import { simulatedFleet, type SimulatedFleet } from '../support/simulated-fleet';

const h = useHarness();
let fleet: SimulatedFleet;
let simulator: Simulator;
let nodes: string[];

beforeAll(async () => {
  fleet = await simulatedFleet(h, { poolId: 'pool-mnt', count: 4, rebootMs: 500 });
  ({ simulator, nodes } = fleet);
});
afterAll(() => fleet?.close());

/** The operation once it has ended. */
function ended(id: string) {
  return eventually(async () => {
    const op = (await call(h, 'GET', `/v1/operations/${id}`)).body;
    return ['succeeded', 'failed', 'cancelled'].includes(op.status) ? op : undefined;
  }, 60_000);
}

describe('a verified reboot (maintenance/<nodeId>)', () => {
  it('drains, reboots, sees the node back on a new boot id, holds its probes healthy, uncordons', async () => {
    const nodeId = nodes[0]!;
    const before = await readNode(h, nodeId);
    const asked = await call(h, 'POST', `/v1/nodes/${nodeId}/reboot`, {
      body: { reason: 'kernel 6.8 update', drain: { deadline: '10m' }, uncordon: true, healthyAfter: '1s' },
      headers: { 'idempotency-key': 'reboot-key-0001' },
    });
    expect(asked.status).toBe(202);
    expect(asked.body.operation).toMatchObject({
      kind: 'maintenance',
      status: 'pending',
      workflowId: `maintenance/${nodeId}`,
    });
    expect(asked.body.node.cordoned).toBe(true);
    const again = await call(h, 'POST', `/v1/nodes/${nodeId}/reboot`, {
      body: { reason: 'kernel 6.8 update', drain: { deadline: '10m' }, uncordon: true, healthyAfter: '1s' },
      headers: { 'idempotency-key': 'reboot-key-0001' },
    });
    expect([again.status, again.body.operation.id]).toEqual([200, asked.body.operation.id]);

    const op = await ended(asked.body.operation.id);
    expect(op.status).toBe('succeeded');
    const w = op.progress.waitingFor;
    expect(w.steps.map((s: { step: string; outcome: string }) => [s.step, s.outcome])).toEqual([
      ['drain:10m', 'done'],
      ['reboot', 'done'],
      ['verify', 'done'],
      ['uncordon', 'done'],
    ]);
    expect(w.bootIdBefore).toBe(before.bootId);
    const after = await readNode(h, nodeId);
    expect(after.bootId).not.toBe(before.bootId);
    expect(Date.parse(after.bootedAt)).toBeGreaterThan(Date.parse(before.bootedAt));
    expect(after).toMatchObject({ cordoned: false, maintenance: false, noScheduleReasons: [] });

    // The reboot ran once, and came back `returned` from the new boot.
    const reboot = (await call(h, 'GET', `/v1/commands/${w.steps[1].commandId}`)).body;
    await eventually(async () =>
      (await call(h, 'GET', `/v1/commands/${w.steps[1].commandId}`)).body.status === 'returned'
        ? true
        : undefined,
    );
    expect(reboot).toMatchObject({ action: 'reboot', operationId: op.id });
    const types = (await eventsOf(h, nodeId)).map((e) => e.type);
    expect(types.filter((t) => t.startsWith('node.maintenance.'))).toEqual([
      'node.maintenance.started',
      'node.maintenance.step-ended',
      'node.maintenance.step-ended',
      'node.maintenance.step-ended',
      'node.maintenance.step-ended',
      'node.maintenance.succeeded',
    ]);
    expect(types.filter((t) => t === 'node.booted')).toHaveLength(2);
    await recordHistory(h.temporal, `maintenance/${nodeId}`, 'maintenance-reboot');
    expect(types.filter((t) => t === 'node.command.started')).toHaveLength(1);
  });

  it('a node that does not come back within rebootTimeout goes to maintenance, saying so', async () => {
    const nodeId = nodes[1]!;
    const before = await readNode(h, nodeId);
    await simulator.pause(nodeId);
    const asked = await call(h, 'POST', `/v1/nodes/${nodeId}/reboot`, {
      body: { reason: 'firmware', rebootTimeout: '10s' },
    });
    expect(asked.status).toBe(202);
    const running = await eventually(async () => {
      const op = (await call(h, 'GET', `/v1/operations/${asked.body.operation.id}`)).body;
      return op.progress.phase === 'rebooting' ? op : undefined;
    });
    expect(running.progressInWords ?? running.progress.waitingFor.bootIdBefore).toBeTruthy();
    const op = await ended(asked.body.operation.id);
    expect(op.status).toBe('failed');
    expect(op.error.reason).toBe(
      `the node did not come back on a new boot within 10 s (boot id still ${before.bootId})`,
    );
    const node = await readNode(h, nodeId);
    expect(node).toMatchObject({ maintenance: true, cordoned: true });
    const [failed] = await eventsOf(h, nodeId, 'node.maintenance.failed');
    expect(failed!.data).toMatchObject({ step: 'reboot', reason: op.error.reason });
    // Its reboot never reached the node: withdrawn, never run after the node comes back.
    const command = (await call(h, 'GET', `/v1/commands/${op.progress.waitingFor.steps[0].commandId}`)).body;
    expect(command.status).toBe('cancelled');
    simulator.resume(nodeId);
  });

  it('a run step that fails stops the plan there: the node is in maintenance, the rest not run', async () => {
    const nodeId = nodes[2]!;
    simulator.actionOutcomes({ 'driver-upgrade': 'fail' }, nodeId);
    const asked = await call(h, 'POST', `/v1/nodes/${nodeId}/maintenances`, {
      body: {
        reason: 'roll 570',
        steps: [
          { kind: 'drain' },
          { kind: 'run', action: 'driver-upgrade' },
          { kind: 'reboot' },
          { kind: 'uncordon' },
        ],
      },
    });
    expect(asked.status).toBe(202);
    const op = await ended(asked.body.operation.id);
    expect(op.status).toBe('failed');
    expect(op.error).toMatchObject({ step: 'run:driver-upgrade', index: 1 });
    expect(op.error.reason).toMatch(
      /^driver-upgrade failed \(exit 1\): driver-upgrade exited 1 \(command cmd_/,
    );
    expect(op.progress.waitingFor.steps.map((s: { outcome: string | null }) => s.outcome)).toEqual([
      'done',
      'failed',
      null,
      null,
    ]);
    expect(await readNode(h, nodeId)).toMatchObject({ maintenance: true, cordoned: true });
    expect((await eventsOf(h, nodeId, 'node.command.requested')).map((e) => e.data.action)).toEqual([
      'driver-upgrade',
    ]);
    simulator.actionOutcomes({}, nodeId);
  });

  it('cancelled while it waits for the node: its unstarted command is withdrawn, the node stays cordoned', async () => {
    const nodeId = nodes[3]!;
    await simulator.pause(nodeId);
    const asked = await call(h, 'POST', `/v1/nodes/${nodeId}/reboot`, {
      body: { reason: 'maybe', drain: {} },
    });
    await eventually(async () => {
      const op = (await call(h, 'GET', `/v1/operations/${asked.body.operation.id}`)).body;
      return op.progress.phase === 'rebooting' ? op : undefined;
    });
    const cancelled = await call(h, 'DELETE', `/v1/operations/${asked.body.operation.id}`, {
      body: { reason: 'not today' },
    });
    expect(cancelled.status).toBe(200);
    const op = await ended(asked.body.operation.id);
    expect(op.status).toBe('cancelled');
    const commandId = op.progress.waitingFor.steps[1].commandId;
    expect((await call(h, 'GET', `/v1/commands/${commandId}`)).body.status).toBe('cancelled');
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, maintenance: false });
    const [event] = await eventsOf(h, nodeId, 'node.maintenance.cancelled');
    expect(event!.data).toEqual({ index: 1, step: 'reboot' });
    simulator.resume(nodeId);
    await h.temporal.workflow.getHandle(`maintenance/${nodeId}`).result();
  });
});
