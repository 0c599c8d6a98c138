import { and, asc, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allocations, events, operations } from '../db/schema';
import type { PoolDrainProgress } from '../domain/progress';
import { poolDrainWorkflowId } from '../workflows/definitions';
import { ParentOperationIdKey } from '../workflows/search-attributes';
import { operationWhen, readNode, setNode } from './support/builders';
import { allocate, call, seedNode, seedPool, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { recordHistory } from './support/histories';
import { mostAtOnce } from './support/overlap';

const h = useHarness();

/** `n` nodes of the pool with the labels, each holding one allocation when `allocated`. */
async function seedNodes(poolId: string, n: number, labels: Record<string, string>, allocated = true) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const nodeId = await seedNode(h, { poolId, tenantId: 'acme', labels });
    if (allocated) await allocate(h, nodeId, 'acme');
    ids.push(nodeId);
  }
  return ids;
}

const drainPool = (poolId: string, body: unknown, headers?: Record<string, string>) =>
  call(h, 'POST', `/v1/pools/${poolId}/drain`, { body, headers });

/** The node drains begun on these nodes, as their operation records stand. */
const drainsOf = (nodeIds: string[]) =>
  h.db
    .select()
    .from(operations)
    .where(and(eq(operations.kind, 'drain'), inArray(operations.nodeId, nodeIds)));

async function releaseAll(nodeId: string) {
  const held = await h.db.select().from(allocations).where(eq(allocations.nodeId, nodeId));
  for (const a of held) if (!a.releasedAt) await call(h, 'POST', `/v1/allocations/${a.id}/release`);
}

/** The pool drain's progress, as its record has it. */
const progressOf = async (operationId: string): Promise<PoolDrainProgress> =>
  (await call(h, 'GET', `/v1/operations/${operationId}`)).body.progress;

/** How many of the pool drain's nodes drain now, as its last look counted them. */
const drainingNow = async (operationId: string) =>
  (await progressOf(operationId)).waitingFor?.counts.draining;

describe('pool drain', () => {
  it('drains 50 selected nodes at most 5 at a time, as their allocations go, and leaves the others alone', async () => {
    await seedPool(h, { id: 'pool-roll', tenantId: 'acme' });
    const rack = await seedNodes('pool-roll', 50, { rack: 'b7', 'gpu.model': 'H100' });
    const others = [
      ...(await seedNodes('pool-roll', 2, { rack: 'c1', 'gpu.model': 'H100' })),
      ...(await seedNodes('pool-roll', 1, { rack: 'b7', 'gpu.model': 'A100' })),
    ];
    const started = await drainPool('pool-roll', {
      selector: 'rack=b7,gpu.model=H100',
      maxConcurrent: 5,
      reason: 'driver roll-out',
    });
    expect(started.status).toBe(202);
    const op = started.body.operation;
    expect(op).toMatchObject({
      kind: 'pool-drain',
      status: 'pending',
      nodeId: null,
      poolId: 'pool-roll',
      workflowId: 'pool-drain/pool-roll',
      reason: 'driver roll-out',
    });
    expect([...op.result.nodeIds].sort()).toEqual([...rack].sort());

    // The owners release what runs on each node being drained, a few at a time, while the
    // parent's progress is sampled.
    const samples: PoolDrainProgress[] = [];
    await eventually(
      async () => {
        samples.push(await progressOf(op.id));
        const running = (await drainsOf(rack)).filter((d) => d.status === 'running');
        for (const drain of running.slice(0, 2)) await releaseAll(drain.nodeId!);
        const read = await call(h, 'GET', `/v1/operations/${op.id}`);
        return ['succeeded', 'failed', 'cancelled'].includes(read.body.status) ? read.body : undefined;
      },
      90_000,
      100,
    );
    const counted = samples.flatMap((p) => (p.waitingFor ? [p.waitingFor.counts] : []));
    for (const c of counted) expect(c.draining + c.waitingForBudget).toBeLessThanOrEqual(5);
    expect(counted.some((c) => c.draining > 0 && c.pending > 0)).toBe(true);

    const done = (await call(h, 'GET', `/v1/operations/${op.id}`)).body;
    expect(done).toMatchObject({
      status: 'succeeded',
      result: {
        counts: { pending: 0, draining: 0, waitingForBudget: 0, drained: 50, failed: 0 },
        failed: [],
      },
    });
    const drains = await drainsOf(rack);
    expect(drains).toHaveLength(50);
    expect(drains.every((d) => d.status === 'succeeded' && d.actor === op.actor)).toBe(true);
    expect(drains.every((d) => d.reason === 'driver roll-out')).toBe(true);
    expect(mostAtOnce(drains)).toBeLessThanOrEqual(5);
    expect(mostAtOnce(drains)).toBeGreaterThan(1);
    for (const nodeId of rack) {
      const rows = await h.db.select().from(events).where(eq(events.nodeId, nodeId)).orderBy(asc(events.id));
      const types = rows.map((e) => e.type);
      expect(types.filter((t) => t.startsWith('node.drain'))).toEqual(['node.draining', 'node.drained']);
    }
    // Not selected: no event, not cordoned, no drain.
    for (const nodeId of others) {
      expect(await readNode(h, nodeId)).toMatchObject({ cordoned: false, noScheduleReasons: [] });
      expect(await h.db.select().from(events).where(eq(events.nodeId, nodeId))).toEqual([]);
    }
    expect(await drainsOf(others)).toEqual([]);
    // Each node drain is an ordinary drain whose record names the pool drain, found in the Web UI
    // by its node and by its parent.
    expect(drains.every((d) => d.parentOperationId === op.id)).toBe(true);
    const child = await h.temporal.workflow.getHandle(`drain/${rack[0]}`).describe();
    expect(child.searchAttributes).toMatchObject({ NodeId: [rack[0]], LifecycleOperation: ['drain'] });
    expect(child.typedSearchAttributes.get(ParentOperationIdKey)).toBe(op.id);
    expect(await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-roll')).result()).toBe('succeeded');
  }, 120_000);

  it('answers a second request while it runs with the running drain, and honours an Idempotency-Key', async () => {
    await seedPool(h, { id: 'pool-keys', tenantId: 'acme' });
    const nodes = await seedNodes('pool-keys', 3, { rack: 'a1' });
    const headers = { 'idempotency-key': 'pool-drain-key-1' };
    const body = { selector: 'rack=a1', maxConcurrent: 2, deadline: '2h', reason: 'kernel update' };
    const first = await drainPool('pool-keys', body, headers);
    expect(first.status).toBe(202);
    expect(first.body.operation.idempotencyKey).toBe('pool-drain-key-1');
    const again = await drainPool('pool-keys', body, headers);
    expect(again).toMatchObject({ status: 200, body: { operation: { id: first.body.operation.id } } });
    const other = await drainPool('pool-keys', { ...body, maxConcurrent: 3 }, headers);
    expect(other).toMatchObject({ status: 422, body: { error: { code: 'IDEMPOTENCY_KEY_REUSED' } } });
    // Another request without the key, while it runs: the running pool drain.
    const running = await drainPool('pool-keys', { reason: 'something else' });
    expect(running).toMatchObject({ status: 200, body: { operation: { id: first.body.operation.id } } });
    const poolDrains = await h.db.select().from(operations).where(eq(operations.poolId, 'pool-keys'));
    expect(poolDrains.filter((o) => o.kind === 'pool-drain')).toHaveLength(1);
    // A duration deadline counts from each node's own drain start.
    await eventually(async () => (await drainsOf(nodes)).length === 2);
    const progress = await eventually(async () => {
      const read = await call(h, 'GET', `/v1/operations/${first.body.operation.id}`);
      return read.body.progress?.waitingFor?.counts?.draining === 2 ? read.body.progress : undefined;
    });
    expect(progress).toMatchObject({
      deadline: null,
      waitingFor: { maxConcurrent: 2, graceAfterStart: '2h', counts: { pending: 1 } },
    });
    const child = (await drainsOf(nodes))[0]!;
    const childProgress = (await call(h, 'GET', `/v1/operations/${child.id}`)).body.progress;
    expect(Date.parse(childProgress.deadline) - child.createdAt.getTime()).toBeGreaterThan(7_190_000);
    expect(Date.parse(childProgress.deadline) - child.createdAt.getTime()).toBeLessThan(7_210_000);
    for (const nodeId of nodes) await releaseAll(nodeId);
    expect(await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-keys')).result()).toBe('succeeded');
    // Once it ended the key still answers it, and a new request is a new pool drain.
    const replay = await drainPool('pool-keys', body, headers);
    expect(replay).toMatchObject({
      status: 200,
      body: { operation: { id: first.body.operation.id, status: 'succeeded' } },
    });
  }, 60_000);

  it('refuses bad input with 400 before anything changes', async () => {
    await seedPool(h, { id: 'pool-bad', tenantId: 'acme' });
    const nodes = await seedNodes('pool-bad', 2, { rack: 'b7' }, false);
    const bad: unknown[] = [
      {},
      { reason: '' },
      { reason: 'x'.repeat(257) },
      { reason: 'r\u0000' },
      { reason: 'r', selector: 'rack' },
      { reason: 'r', selector: 'rack=b7,rack=b8' },
      { reason: 'r', selector: 'rack=b 7' },
      { reason: 'r', selector: '-rack=b7' },
      { reason: 'r', selector: 7 },
      { reason: 'r', maxConcurrent: 0 },
      { reason: 'r', maxConcurrent: 1001 },
      { reason: 'r', maxConcurrent: 1.5 },
      { reason: 'r', maxConcurrent: '2' },
      { reason: 'r', deadline: 'tomorrow' },
      { reason: 'r', deadline: '-1h' },
      { reason: 'r', deadline: '31d' },
      { reason: 'r', deadline: '2020-01-01T00:00:00Z' },
      { reason: 'r', extra: true },
    ];
    for (const body of bad) {
      const reply = await drainPool('pool-bad', body);
      expect(reply, JSON.stringify(body)).toMatchObject({
        status: 400,
        body: { error: { code: 'INVALID_INPUT' } },
      });
    }
    expect((await drainPool('Pool_Bad', { reason: 'r' })).status).toBe(400);
    expect((await drainPool('pool-missing', { reason: 'r' })).status).toBe(404);
    expect(await h.db.select().from(operations).where(eq(operations.poolId, 'pool-bad'))).toEqual([]);
    for (const nodeId of nodes) {
      expect(await h.db.select().from(events).where(eq(events.nodeId, nodeId))).toEqual([]);
    }
  });

  it('lets a tenant key drain only pools it can see, and read the drain back', async () => {
    await seedPool(h, { id: 'pool-mine', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-theirs', tenantId: 'globex' });
    await seedNodes('pool-mine', 1, {}, false);
    const key = await tenantKey(h, 'acme', ['compute:nodes:drain', 'compute:nodes:read']);
    const readOnly = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-read');
    const theirs = await call(h, 'POST', '/v1/pools/pool-theirs/drain', {
      token: key.secret,
      body: { reason: 'r' },
    });
    expect(theirs.status).toBe(404);
    const refused = await call(h, 'POST', '/v1/pools/pool-mine/drain', {
      token: readOnly.secret,
      body: { reason: 'r' },
    });
    expect(refused.status).toBe(403);
    const mine = await call(h, 'POST', '/v1/pools/pool-mine/drain', {
      token: key.secret,
      body: { reason: 'r' },
    });
    expect(mine.status).toBe(202);
    const done = await eventually(async () => {
      const read = await call(h, 'GET', `/v1/operations/${mine.body.operation.id}`, { token: key.secret });
      return read.body.status === 'succeeded' ? read.body : undefined;
    });
    expect(done.result.counts).toMatchObject({ drained: 1, failed: 0 });
  });

  it('counts a node whose drain is refused, or ends otherwise, as failed, and names it', async () => {
    await seedPool(h, { id: 'pool-mixed', tenantId: 'acme' });
    const [ok, uncordoned, gone] = await seedNodes('pool-mixed', 3, { rack: 'm1' });
    const started = await drainPool('pool-mixed', { selector: 'rack=m1', reason: 'r' });
    expect(started.status).toBe(202);
    // One at a time (the default): the third node is deleted before its turn, the second is
    // uncordoned while it drains.
    await eventually(async () => (await drainsOf([ok!])).length === 1);
    await setNode(h, gone!, { deletedAt: new Date() });
    await releaseAll(ok!);
    await eventually(async () => (await drainsOf([uncordoned!])).length === 1);
    await call(h, 'POST', `/v1/nodes/${uncordoned}/uncordon`, { body: { reason: 'needed back' } });
    expect(await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-mixed')).result()).toBe('failed');
    const done = (await call(h, 'GET', `/v1/operations/${started.body.operation.id}`)).body;
    expect(done.status).toBe('failed');
    expect(done.result.counts).toMatchObject({ drained: 1, failed: 2, pending: 0, draining: 0 });
    expect(done.result.failed).toEqual([
      expect.objectContaining({ nodeId: uncordoned, code: 'CANCELLED' }),
      expect.objectContaining({ nodeId: gone, operationId: null, code: 'INVALID_STATE' }),
    ]);
    expect(done.error.message).toMatch(/^2 of 3 nodes did not drain/);
    expect(await drainsOf([gone!])).toEqual([]);
    await recordHistory(h.temporal, poolDrainWorkflowId('pool-mixed'), 'pool-drain');
  }, 60_000);

  it('stops starting node drains when cancelled from the Temporal UI, and lets the running ones finish', async () => {
    await seedPool(h, { id: 'pool-stop', tenantId: 'acme' });
    const nodes = await seedNodes('pool-stop', 6, { rack: 's1' });
    const started = await drainPool('pool-stop', { maxConcurrent: 2, reason: 'r' });
    expect(started.status).toBe(202);
    await eventually(async () => (await drainingNow(started.body.operation.id)) === 2);
    // What the Web UI's cancel does: cancel the workflow, with no cancellation recorded first.
    await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-stop')).cancel();
    expect(await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-stop')).result()).toBe('cancelled');
    const [op] = await h.db.select().from(operations).where(eq(operations.id, started.body.operation.id));
    // Who asked: the identity on the workflow's cancel request (the Web UI's user, a client's pid@host).
    expect(op).toMatchObject({ status: 'cancelled', cancellation: { children: 'finish' } });
    expect(op!.cancellation!.by).toMatch(/^temporal:\S+/);
    // Its progress keeps where its nodes stood when it stopped.
    expect(op!.waitingFor).toMatchObject({ counts: { pending: 4, draining: 2, drained: 0 } });
    const drains = await drainsOf(nodes);
    expect(drains).toHaveLength(2);
    // The running node drains go on and finish; no other node is touched.
    for (const d of drains) await releaseAll(d.nodeId!);
    await eventually(async () => (await drainsOf(nodes)).every((d) => d.status === 'succeeded'));
    for (const nodeId of nodes.filter((n) => !drains.some((d) => d.nodeId === n))) {
      expect(await h.db.select().from(events).where(eq(events.nodeId, nodeId))).toEqual([]);
    }
  }, 60_000);

  it('cancels the running node drains too when DELETE asks for it, naming who asked on each', async () => {
    await seedPool(h, { id: 'pool-halt', tenantId: 'acme' });
    const nodes = await seedNodes('pool-halt', 3, { rack: 'h1' });
    const started = await drainPool('pool-halt', { maxConcurrent: 1, reason: 'r' });
    await eventually(async () => (await drainingNow(started.body.operation.id)) === 1);
    const cancelled = await call(h, 'DELETE', `/v1/operations/${started.body.operation.id}`, {
      body: { reason: 'wrong rack', children: 'cancel' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancellation: { reason: 'wrong rack', children: 'cancel' },
    });
    const by = cancelled.body.cancellation.by as string;
    expect(by).toMatch(/^key:/);
    expect(await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-halt')).result()).toBe('cancelled');
    const [drain] = await drainsOf(nodes);
    // The child was cancelled too, by the same caller: draining off, one node.drain.cancelled.
    await eventually(async () => (await drainsOf(nodes))[0]?.status === 'cancelled');
    const [child] = await drainsOf(nodes);
    expect(child!.cancellation).toMatchObject({ by, reason: 'wrong rack' });
    const ended = await h.db.select().from(events).where(eq(events.nodeId, drain!.nodeId!));
    expect(ended.filter((e) => e.type === 'node.drain.cancelled')).toEqual([
      expect.objectContaining({ actor: by, reason: 'wrong rack' }),
    ]);
    // No other node was started.
    expect(await drainsOf(nodes)).toHaveLength(1);
  }, 60_000);

  it('continues as new on a long drain and still drains every node once', async () => {
    await seedPool(h, { id: 'pool-long', tenantId: 'acme' });
    const nodes = await seedNodes('pool-long', 12, { rack: 'l1' });
    const started = await drainPool('pool-long', { maxConcurrent: 3, reason: 'long' });
    expect(started.status).toBe(202);
    const operationId: string = started.body.operation.id;
    // The same workflow, restarted with a small history budget and a short look interval.
    await operationWhen(h, operationId);
    const handle = h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-long'));
    await handle.terminate('restart with a small continue-as-new budget');
    await h.temporal.workflow.start('poolDrain', {
      workflowId: poolDrainWorkflowId('pool-long'),
      taskQueue: h.taskQueue,
      args: [{ operationId, poolId: 'pool-long', continueAsNewAfter: 40, pollIntervalMs: 500 }],
    });
    const runs = new Set<string>();
    await eventually(
      async () => {
        runs.add((await handle.describe()).runId);
        const running = (await drainsOf(nodes)).filter((d) => d.status === 'running');
        for (const drain of running.slice(0, 1)) await releaseAll(drain.nodeId!);
        const [op] = await h.db.select().from(operations).where(eq(operations.id, operationId));
        return op!.status !== 'running';
      },
      60_000,
      200,
    );
    expect(runs.size).toBeGreaterThan(1);
    const [op] = await h.db.select().from(operations).where(eq(operations.id, operationId));
    expect(op).toMatchObject({ status: 'succeeded', result: { counts: { drained: 12, failed: 0 } } });
    const drains = await drainsOf(nodes);
    expect(drains).toHaveLength(12);
    expect(mostAtOnce(drains)).toBeLessThanOrEqual(3);
  }, 90_000);
});
