import { describe, expect, it } from 'vitest';
import { operationWhen, readNode, setNode } from './support/builders';
import { call, eventsOf, seedNode, seedPool, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { remediationsOf, remediationWhen, WORKER_BOUND_MS } from './support/remediation';
import { snapshot } from './support/snapshot';

const h = useHarness();

/** What a Slurm bridge reports of a node it sees idle and schedulable. */
const IDLE = {
  name: 'gpu-17',
  state: 'idle',
  reason: null,
  cordoned: false,
  cordonedByDrydock: false,
  down: false,
  disagreement: null,
};

const report = (nodeId: string, body: unknown, options: { source?: string; token?: string } = {}) =>
  call(h, 'PUT', `/v1/nodes/${nodeId}/schedulers/${options.source ?? 'slurm:hpc1'}`, {
    body,
    token: options.token,
  });

describe("a scheduler's view of a node", () => {
  it('is stored and shown on the node; the same report writes no event, a changed one writes one', async () => {
    await seedPool(h, { id: 'pool-sv', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-sv' });
    expect((await readNode(h, nodeId)).schedulers).toEqual([]);
    const version = (await readNode(h, nodeId)).version;

    const first = await report(nodeId, IDLE);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      source: 'slurm:hpc1',
      ...IDLE,
      observedAt: expect.any(String),
      changedAt: first.body.observedAt,
    });
    const node = await readNode(h, nodeId);
    expect(node.schedulers).toEqual([first.body]);
    // A view is no change of the node's own state.
    expect(node.version).toBe(version);
    expect(await eventsOf(h, nodeId, 'node.scheduler.changed')).toMatchObject([
      { actor: 'key:bootstrap-operator', data: { source: 'slurm:hpc1', view: IDLE, was: null } },
    ]);

    const again = await report(nodeId, IDLE);
    expect(again.status).toBe(200);
    expect(again.body.changedAt).toBe(first.body.changedAt);
    expect(Date.parse(again.body.observedAt)).toBeGreaterThan(Date.parse(first.body.observedAt));
    expect(await eventsOf(h, nodeId, 'node.scheduler.changed')).toHaveLength(1);

    const drained = {
      ...IDLE,
      state: 'idle+drain',
      reason: 'bad fan',
      cordoned: true,
      disagreement: "Slurm drained by an administrator: 'bad fan'; Drydock's node is schedulable",
    };
    const changed = await report(nodeId, drained);
    expect(changed.body).toMatchObject({ ...drained, changedAt: changed.body.observedAt });
    const events = await eventsOf(h, nodeId, 'node.scheduler.changed');
    expect(events).toHaveLength(2);
    expect(events[1]!.data).toEqual({ source: 'slurm:hpc1', view: drained, was: IDLE });
    // Another cluster's view of the same node is its own; the node lists them by source.
    await report(nodeId, { ...IDLE, name: 'n017' }, { source: 'slurm:hpc0' });
    expect((await readNode(h, nodeId)).schedulers.map((s: { source: string }) => s.source)).toEqual([
      'slurm:hpc0',
      'slurm:hpc1',
    ]);
    // A colon sent percent-encoded names the same scheduler.
    expect((await report(nodeId, drained, { source: 'slurm%3Ahpc1' })).body.source).toBe('slurm:hpc1');
    expect(await eventsOf(h, nodeId, 'node.scheduler.changed')).toHaveLength(3);
  });

  it("down makes SchedulerNodeDown true, as an agent's fault (NoSchedule, a remediation); up again clears it", async () => {
    await seedPool(h, { id: 'pool-sv-down', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-sv-down' });
    await report(nodeId, IDLE);

    const down = { ...IDLE, state: 'down*', reason: 'Not responding', down: true };
    expect((await report(nodeId, down)).status).toBe(200);
    const node = await readNode(h, nodeId);
    expect(node.conditions).toEqual([
      {
        type: 'SchedulerNodeDown',
        status: true,
        reason: 'slurm:hpc1: Not responding',
        since: expect.any(String),
        source: 'scheduler',
      },
    ]);
    expect(node.noScheduleReasons).toEqual(['condition:SchedulerNodeDown']);
    const [remediation] = await remediationsOf(h, nodeId);
    expect(remediation).toMatchObject({
      kind: 'remediation',
      actor: 'key:bootstrap-operator',
      reason: 'slurm:hpc1: Not responding',
    });
    await remediationWhen(h, remediation.id);
    // Still down, the same report: nothing more.
    await report(nodeId, down);
    expect(await remediationsOf(h, nodeId)).toHaveLength(1);

    const back = await report(nodeId, { ...IDLE, state: 'idle' });
    expect(back.status).toBe(200);
    const cleared = await readNode(h, nodeId);
    expect(cleared.conditions).toMatchObject([
      { type: 'SchedulerNodeDown', status: false, reason: 'slurm:hpc1: idle', source: 'scheduler' },
    ]);
    expect(cleared.noScheduleReasons).toEqual([]);
    // The clear woke the remediation, which sees the condition gone.
    const done = await operationWhen(h, remediation.id, (op) => op.status !== 'running');
    expect(done).toMatchObject({ status: 'succeeded', progress: { phase: 'succeeded' } });
  });

  it("down from Kubernetes is SchedulerNodeNotReady, set and cleared apart from Slurm's SchedulerNodeDown", async () => {
    await seedPool(h, { id: 'pool-sv-notready', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-sv-notready' });
    const k8s = { source: 'kubernetes:k1' };
    const ready = { ...IDLE, state: 'Ready' };
    await report(nodeId, ready, k8s);
    await report(nodeId, IDLE);

    const notReady = { ...ready, state: 'NotReady', reason: 'KubeletNotReady', down: true };
    expect((await report(nodeId, notReady, k8s)).status).toBe(200);
    await report(nodeId, { ...IDLE, state: 'down*', reason: 'Not responding', down: true });
    const both = await readNode(h, nodeId);
    expect(both.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'SchedulerNodeNotReady',
          status: true,
          reason: 'kubernetes:k1: KubeletNotReady',
          source: 'scheduler',
        }),
        expect.objectContaining({
          type: 'SchedulerNodeDown',
          status: true,
          reason: 'slurm:hpc1: Not responding',
          source: 'scheduler',
        }),
      ]),
    );
    expect([...both.noScheduleReasons].sort()).toEqual([
      'condition:SchedulerNodeDown',
      'condition:SchedulerNodeNotReady',
    ]);

    // Kubernetes has it Ready again: its condition clears; Slurm's stays.
    await report(nodeId, ready, k8s);
    const cleared = await readNode(h, nodeId);
    const byType = (type: string) => cleared.conditions.find((c: { type: string }) => c.type === type);
    expect(byType('SchedulerNodeNotReady')).toMatchObject({ status: false, reason: 'kubernetes:k1: Ready' });
    expect(byType('SchedulerNodeDown')).toMatchObject({ status: true });
    expect(cleared.noScheduleReasons).toEqual(['condition:SchedulerNodeDown']);

    // Slurm has it up too: the remediations end, and nothing of this node runs on into the next test.
    await report(nodeId, IDLE);
    await eventually(async () => {
      const remediations = await remediationsOf(h, nodeId);
      return (
        remediations.length > 0 && remediations.every((r) => r.status !== 'running' && r.status !== 'pending')
      );
    }, WORKER_BOUND_MS);
  });

  it("take compute:nodes:observe on a node of the key's tenant; bad input is 400; nothing changes on a refusal", async () => {
    await seedPool(h, { id: 'pool-sv-keys', tenantId: 'acme', grants: ['guest'] });
    await seedPool(h, { id: 'pool-sv-other', tenantId: 'globex' });
    const nodeId = await seedNode(h, { poolId: 'pool-sv-keys' });
    const foreign = await seedNode(h, { poolId: 'pool-sv-other' });
    const deleted = await seedNode(h, { poolId: 'pool-sv-keys' });
    await setNode(h, deleted, { deletedAt: new Date() });
    const bridge = await tenantKey(h, 'acme', ['compute:nodes:observe'], 'acme-slurm-bridge');
    const reader = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-sv-reader');
    const guest = await tenantKey(h, 'guest', ['compute:nodes:observe'], 'guest-sv-bridge');

    const before = await snapshot(h);
    const withoutAction = await report(nodeId, IDLE, { token: reader.secret });
    expect(withoutAction.status).toBe(403);
    expect(withoutAction.body.error.details).toEqual({ action: 'compute:nodes:observe' });
    const granted = await report(nodeId, IDLE, { token: guest.secret });
    expect(granted.status).toBe(403);
    expect(granted.body.error.details).toMatchObject({ grant: 'placement' });
    expect((await report(foreign, IDLE, { token: bridge.secret })).status).toBe(404);
    expect((await report(deleted, IDLE)).status).toBe(404);
    const bad: [string, unknown][] = [
      ['slurm:hpc1', { ...IDLE, name: undefined }],
      ['slurm:hpc1', { ...IDLE, reason: undefined }],
      ['slurm:hpc1', { ...IDLE, extra: 1 }],
      ['slurm:hpc1', { ...IDLE, name: '' }],
      ['slurm:hpc1', { ...IDLE, name: 'n'.repeat(129) }],
      ['slurm:hpc1', { ...IDLE, state: 's'.repeat(65) }],
      ['slurm:hpc1', { ...IDLE, reason: 'r'.repeat(257) }],
      ['slurm:hpc1', { ...IDLE, reason: 'bad\u001b[31m fan' }],
      ['slurm:hpc1', { ...IDLE, disagreement: 'invoice\u202egpj.exe' }],
      ['slurm:hpc1', { ...IDLE, down: 'yes' }],
      ['Slurm:hpc1', IDLE],
      ['slurm', IDLE],
      ['slurm:', IDLE],
    ];
    for (const [source, body] of bad) {
      const reply = await report(nodeId, body, { source, token: bridge.secret });
      expect(reply.status, `${source} ${JSON.stringify(body)}`).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect(await snapshot(h)).toEqual(before);

    const recorded = await report(nodeId, IDLE, { token: bridge.secret });
    expect(recorded.status).toBe(200);
    expect(await eventsOf(h, nodeId, 'node.scheduler.changed')).toMatchObject([
      { actor: 'key:acme-slurm-bridge' },
    ]);
  });
});
