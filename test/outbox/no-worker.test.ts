import { describe, expect, it } from 'vitest';
import { drainWorkflowId } from '../../workflows/definitions';
import { operationWhen, seedPoolNode } from '../support/builders';
import { allocate, call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';

// Workers come and go in this file: none at first.
const h = useHarness({ worker: false });

describe('an operation while no worker is up', () => {
  it('is recorded and answered at once, its progress read from Postgres, and it runs once a worker is back', async () => {
    const nodeId = await seedPoolNode(h, 'pool-nw');
    const [first, second] = [await allocate(h, nodeId, 'acme'), await allocate(h, nodeId, 'acme')];

    // No worker: the request is recorded, fenced and answered, and says what it waits for.
    const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'no worker' } });
    expect(reply.status).toBe(202);
    expect(reply.body.node).toMatchObject({ cordoned: true, noScheduleReasons: ['draining'] });
    const opId = reply.body.operation.id as string;
    const pending = (await call(h, 'GET', `/v1/operations/${opId}`)).body;
    expect(pending).toMatchObject({
      status: 'pending',
      progress: { kind: 'drain', phase: 'waiting-for-worker', startedAt: null, waitingFor: null },
    });
    const ready = (await call(h, 'GET', '/readyz')).body;
    expect(ready).toMatchObject({ status: 'ready', postgres: true, outbox: { waiting: 1 } });

    // A worker takes it: the record says what the drain waits for.
    await h.startWorker();
    const waiting = await operationWhen(h, opId, (op) => op.progress.phase === 'waiting', 30_000);
    expect(waiting.progress.waitingFor).toMatchObject({ allocations: 2 });

    // Every worker stops: the record still answers, as the last look left it.
    await h.stopWorker();
    const read = (await call(h, 'GET', `/v1/operations/${opId}`)).body;
    expect(read).toMatchObject({ status: 'running', progress: waiting.progress });
    // A release meanwhile commits (and wakes the drain through the outbox, once a worker is back).
    expect((await call(h, 'POST', `/v1/allocations/${first}/release`)).status).toBe(200);
    expect((await call(h, 'POST', `/v1/allocations/${second}/release`)).status).toBe(200);
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.progress).toEqual(waiting.progress);
    expect((await call(h, 'GET', '/readyz')).body.outbox.waiting).toBeGreaterThanOrEqual(1);

    await h.startWorker();
    try {
      const done = await operationWhen(h, opId, (op) => op.status === 'succeeded', 30_000);
      expect(done.progress).toMatchObject({ phase: 'drained', nextCheckAt: null });
      expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
      expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('drained');
    } finally {
      await h.stopWorker();
    }
  }, 120_000);
});
