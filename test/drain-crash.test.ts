import { describe, expect, it } from 'vitest';
import { drainWorkflowId } from '../workflows/definitions';
import { allocate, call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { killWorker as kill, startWorkerProcess } from './support/worker-process';

// No in-process worker: this file runs workers as child processes so it can kill them for real.
const h = useHarness({ worker: false });

async function drainedEvents(nodeId: string) {
  return eventsOf(h, nodeId, 'node.drained');
}

describe('drain survives a killed worker', () => {
  it('a release while the worker is dead is finished by the next worker, exactly once', async () => {
    await seedPool(h, { id: 'pool-k', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-k', tenantId: 'acme' });
    const allocs = [await allocate(h, nodeId, 'acme'), await allocate(h, nodeId, 'acme')];

    let worker = startWorkerProcess(h);
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'crash test' } });
    expect(started.status).toBe(202);
    await eventually(async () => {
      const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
      return op.body.progress?.phase === 'waiting';
    });

    await kill(worker);
    for (const id of allocs) await call(h, 'POST', `/v1/allocations/${id}/release`);
    // Nobody runs the workflow now: the node stays draining.
    await new Promise((r) => setTimeout(r, 500));
    expect(await drainedEvents(nodeId)).toHaveLength(0);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body.noScheduleReasons).toEqual(['draining']);

    worker = startWorkerProcess(h);
    try {
      await eventually(async () => (await drainedEvents(nodeId)).length > 0, 30_000, 100);
      expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('drained');
    } finally {
      await kill(worker);
    }
    expect(await drainedEvents(nodeId)).toHaveLength(1);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
    const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
    expect(op.body.status).toBe('succeeded');
  });

  it('a worker killed right after the release, mid-step, still yields one drained event', async () => {
    await seedPool(h, { id: 'pool-k', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-k', tenantId: 'acme' });
    const alloc = await allocate(h, nodeId, 'acme');
    let worker = startWorkerProcess(h);
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    expect(started.status).toBe(202);
    await eventually(async () => {
      const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
      return op.body.progress?.phase === 'waiting';
    });

    await call(h, 'POST', `/v1/allocations/${alloc}/release`);
    await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20)));
    await kill(worker);

    worker = startWorkerProcess(h);
    try {
      await eventually(
        async () =>
          (await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).describe()).status.name ===
          'COMPLETED',
        40_000,
        200,
      );
    } finally {
      await kill(worker);
    }
    expect(await drainedEvents(nodeId)).toHaveLength(1);
    expect((await call(h, 'GET', `/v1/operations/${started.body.operation.id}`)).body.status).toBe(
      'succeeded',
    );
  });
});
