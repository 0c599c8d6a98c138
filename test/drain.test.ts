import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { operations } from '../db/schema';
import { drainProgressQuery, drainWorkflowId } from '../workflows/definitions';
import { operationWhen, readNode, seedPoolNode } from './support/builders';
import { allocate, call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { recordHistory } from './support/histories';

const h = useHarness();

async function drainedNode(nodeId: string) {
  const events = await eventsOf(h, nodeId, 'node.drained');
  return events.length > 0 ? events : undefined;
}

describe('drain', () => {
  it('cordons, waits for the last allocation, and finishes the moment it is released', async () => {
    await seedPool(h, { id: 'pool-a', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme', hostname: 'gpu-a-01' });
    const first = await allocate(h, nodeId, 'acme');
    const second = await allocate(h, nodeId, 'acme', new Date(Date.now() + 3_600_000));

    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'replace PSU' } });
    expect(started.status).toBe(202);
    expect(started.body.node).toMatchObject({ cordoned: true, noScheduleReasons: ['draining'] });
    // Recorded at once, before any worker took it: pending, waiting for a worker.
    expect(started.body.operation).toMatchObject({
      kind: 'drain',
      status: 'pending',
      nodeId,
      workflowId: drainWorkflowId(nodeId),
      reason: 'replace PSU',
      progress: { kind: 'drain', phase: 'waiting-for-worker', startedAt: null, waitingFor: null },
    });
    const opId = started.body.operation.id as string;

    // While it waits: its record names what it waits for, and the node is still draining.
    const waiting = await operationWhen(h, opId, (op) => op.progress.phase === 'waiting');
    expect(waiting.status).toBe('running');
    expect(waiting.progress.waitingFor.allocations).toBe(2);
    expect(waiting.progress.waitingFor.items.map((a: { id: string }) => a.id).sort()).toEqual(
      [first, second].sort(),
    );
    expect(waiting.progress.waitingFor.earliestEndsAt).not.toBeNull();
    expect(waiting.progress.startedAt).not.toBeNull();
    // The workflow's `progress` query answers the record's own structure.
    const queried = await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).query(drainProgressQuery);
    expect(queried).toEqual(waiting.progress);

    expect((await call(h, 'POST', `/v1/allocations/${first}/release`)).status).toBe(200);
    // One allocation is still live: no drained event yet.
    await operationWhen(h, opId, (op) => op.progress.waitingFor?.allocations === 1);
    expect(await eventsOf(h, nodeId, 'node.drained')).toHaveLength(0);

    // The release wakes the drain by signal: drained long before the allocation's end (an hour
    // away) or the 5-minute periodic look. How fast (well under a second) is measured by
    // bench/drain-reaction.ts, not here, where a loaded machine would make a timing flaky.
    await call(h, 'POST', `/v1/allocations/${second}/release`);
    await eventually(() => drainedNode(nodeId), 10_000, 20);

    const node = await call(h, 'GET', `/v1/nodes/${nodeId}`);
    expect(node.body).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    const op = await call(h, 'GET', `/v1/operations/${opId}`);
    expect(op.body).toMatchObject({ status: 'succeeded' });
    expect(op.body.completedAt).not.toBeNull();
    const types = (await eventsOf(h, nodeId)).map((e) => e.type);
    expect(types).toEqual(['node.draining', 'node.drained']);
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('drained');
    await recordHistory(h.temporal, drainWorkflowId(nodeId), 'drain-released');
  });

  it('finishes at once on a node that holds nothing', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    expect(started.status).toBe(202);
    await eventually(() => drainedNode(nodeId), 5_000);
  });

  it('wakes when an allocation reaches its end, without a release', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    await allocate(h, nodeId, 'acme', new Date(Date.now() + 1_500));
    await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    expect(await eventsOf(h, nodeId, 'node.drained')).toHaveLength(0);
    await eventually(() => drainedNode(nodeId), 6_000);
  });

  it('draining a draining node returns the same operation and appends no event', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    await allocate(h, nodeId, 'acme');
    const first = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    const version = first.body.node.version;
    const again = await Promise.all([1, 2, 3].map(() => call(h, 'POST', `/v1/nodes/${nodeId}/drain`)));
    for (const reply of again) {
      expect(reply.status).toBe(200);
      expect(reply.body.operation.id).toBe(first.body.operation.id);
      expect(reply.body.node.version).toBe(version);
    }
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining']);
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(ops).toHaveLength(1);
  });

  it('uncordon ends a drain: operation cancelled, node.drain.cancelled, workflow finished', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    await allocate(h, nodeId, 'acme');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    await operationWhen(h, started.body.operation.id, (op) => op.progress.phase === 'waiting');
    const uncordoned = await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`, {
      body: { reason: 'changed my mind' },
    });
    expect(uncordoned.status).toBe(200);
    expect(uncordoned.body).toMatchObject({ cordoned: false, noScheduleReasons: [] });
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('cancelled');
    await recordHistory(h.temporal, drainWorkflowId(nodeId), 'drain-cancelled');
    const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
    expect(op.body.status).toBe('cancelled');
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual([
      'node.draining',
      'node.uncordoned',
      'node.drain.cancelled',
    ]);
  });

  it('a drain started again right after an uncordon gets a new operation and drains', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    const alloc = await allocate(h, nodeId, 'acme');
    const first = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`);
    const second = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    expect(second.status).toBe(202);
    expect(second.body.operation.id).not.toBe(first.body.operation.id);
    await call(h, 'POST', `/v1/allocations/${alloc}/release`);
    await eventually(() => drainedNode(nodeId));
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(Object.fromEntries(ops.map((o) => [o.id, o.status]))).toEqual({
      [first.body.operation.id]: 'cancelled',
      [second.body.operation.id]: 'succeeded',
    });
    expect(await eventsOf(h, nodeId, 'node.drain.cancelled')).toHaveLength(1);
    expect(await eventsOf(h, nodeId, 'node.drained')).toHaveLength(1);
  });

  it('an Idempotency-Key returns the stored operation, and refuses another request', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    const other = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme' });
    await allocate(h, nodeId, 'acme');
    const headers = { 'idempotency-key': 'drain-key-0001' };
    const first = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { headers, body: { reason: 'r' } });
    expect(first.status).toBe(202);
    expect(first.body.operation.idempotencyKey).toBe('drain-key-0001');
    const again = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { headers, body: { reason: 'r' } });
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(first.body.operation.id);
    const otherBody = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      headers,
      body: { reason: 'other' },
    });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const otherNode = await call(h, 'POST', `/v1/nodes/${other}/drain`, { headers, body: { reason: 'r' } });
    expect(otherNode.status).toBe(422);
    expect((await readNode(h, other)).cordoned).toBe(false);
    expect(await eventsOf(h, nodeId)).toHaveLength(1);
  });

  it('a stale version is refused with CONFLICT before anything changes', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`);
    const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { headers: { 'if-match': '"1"' } });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'CONFLICT', details: { currentVersion: 2 } });
    expect((await readNode(h, nodeId)).noScheduleReasons).toEqual([]);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.cordoned']);
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(ops).toHaveLength(0);
  });

  it('shows in Temporal with its search attributes, summary and current details', async () => {
    await seedPool(h, { id: 'pool-v', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-v', tenantId: 'acme', hostname: 'gpu-v-01' });
    await allocate(h, nodeId, 'acme');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'rack move' } });
    const handle = h.temporal.workflow.getHandle(drainWorkflowId(nodeId));
    await operationWhen(h, started.body.operation.id, (op) => op.progress.phase === 'waiting');
    const description = await handle.describe();
    const attributes = Object.fromEntries(
      description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]),
    );
    expect(attributes).toMatchObject({
      NodeId: nodeId,
      TenantId: 'acme',
      PoolId: 'pool-v',
      LifecycleOperation: 'drain',
      Hostname: 'gpu-v-01',
      OperationId: started.body.operation.id,
    });
    expect(await description.staticSummary()).toBe(`drain gpu-v-01 (${nodeId}): rack move`);
    const found = await eventually(async () => {
      for await (const wf of h.temporal.workflow.list({ query: `NodeId = '${nodeId}'` })) return wf;
      return undefined;
    });
    expect(found.workflowId).toBe(drainWorkflowId(nodeId));
    const meta = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(meta.currentDetails).toMatch(
      /^Waiting for 1 live allocation to end; no deadline\. Next look \d\d:\d\dZ\.$/,
    );
  });

  it('continues as new while it waits, and still finishes with one drained event', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    const alloc = await allocate(h, nodeId, 'acme');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    const opId = started.body.operation.id;
    // Wake the workflow repeatedly with a small continue-as-new budget: restart it under that budget.
    const handle = h.temporal.workflow.getHandle(drainWorkflowId(nodeId));
    await operationWhen(h, opId, (op) => op.progress.phase === 'waiting');
    await handle.terminate('restart with a small continue-as-new budget');
    await h.temporal.workflow.start('drain', {
      workflowId: drainWorkflowId(nodeId),
      taskQueue: h.taskQueue,
      args: [{ operationId: opId, nodeId, continueAsNewAfter: 2 }],
    });
    // The latest run's next check; a run that has not yet looked (just continued) has none.
    const nextCheck = () =>
      handle.query(drainProgressQuery).then(
        (p) => (p.phase === 'waiting' ? (p.nextCheckAt ?? undefined) : undefined),
        () => undefined,
      );
    const runs = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const before = await eventually(nextCheck);
      runs.add((await handle.describe()).runId);
      await handle.signal('wake', 'test');
      // The wake-up was taken: the drain checked again, in this run or in the one it continued as.
      await eventually(async () => {
        const next = await nextCheck();
        return next !== undefined && next !== before;
      });
    }
    expect(runs.size).toBeGreaterThan(1);
    await call(h, 'POST', `/v1/allocations/${alloc}/release`);
    await eventually(() => drainedNode(nodeId));
    expect(await eventsOf(h, nodeId, 'node.drained')).toHaveLength(1);
    expect((await call(h, 'GET', `/v1/operations/${started.body.operation.id}`)).body.status).toBe(
      'succeeded',
    );
  });
});
