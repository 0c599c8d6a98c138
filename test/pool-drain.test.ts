import { and, asc, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allocations, events, operations } from '../db/schema';
import { progressInWords, type PoolDrainProgress } from '../domain/progress';
import { poolDrainWorkflowId } from '../workflows/definitions';
import { ParentOperationIdKey } from '../workflows/search-attributes';
import { operationWhen, readNode, setNode, workflowResult } from './support/builders';
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

/**
 * What a finished pool drain's history holds: its events, the timers that fired (a look with no
 * wake-up), the wake-ups it was sent, and its steps (local activities) by name.
 */
async function historyOf(workflowId: string) {
  const events = (await h.temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const steps = events.flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    const data =
      marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : null;
    return data
      ? [(JSON.parse(Buffer.from(data).toString()) as { activity_type: string }).activity_type]
      : [];
  });
  return {
    events: events.length,
    timersFired: events.filter((e) => e.timerFiredEventAttributes).length,
    wakes: events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'wake').length,
    looks: steps.filter((s) => s === 'lookAtPoolDrain').length,
    waves: steps.filter((s) => s === 'requestNodeDrains').length,
  };
}

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

  it('cancelling its children waits for a node its drain is looking at, then cancels it: no deadlock', async () => {
    await seedPool(h, { id: 'pool-lock', tenantId: 'acme' });
    await seedNodes('pool-lock', 1, { rack: 'l1' });
    const started = await drainPool('pool-lock', { maxConcurrent: 1, reason: 'r' });
    await eventually(async () => (await drainingNow(started.body.operation.id)) === 1);
    const [child] = await h.db
      .select()
      .from(operations)
      .where(eq(operations.parentOperationId, started.body.operation.id));
    // A node step's lock order: its node, then its operation's row. Hold the node as such a step
    // does while the cancel comes in, then take the row once the cancel waits.
    let cancelled: Promise<Awaited<ReturnType<typeof call>>> | undefined;
    await h.sql.begin(async (step) => {
      await step`select id from nodes where id = ${child!.nodeId!} for update`;
      cancelled = call(h, 'DELETE', `/v1/operations/${started.body.operation.id}`, {
        body: { reason: 'wrong rack', children: 'cancel' },
      });
      await eventually(async () => {
        const [waiting] = await h.sql`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`;
        return waiting!.n > 0;
      });
      await step`select id from operations where id = ${child!.id} for update`;
    });
    expect((await cancelled!).status).toBe(200);
    await eventually(async () => (await readNode(h, child!.nodeId!)).noScheduleReasons.length === 0);
    const [after] = await h.db.select().from(operations).where(eq(operations.id, child!.id));
    expect(after).toMatchObject({ status: 'cancelled', cancellation: { reason: 'wrong rack' } });
  }, 60_000);

  it('looks at its node drains only when one wakes it, not on a timer, however long a node holds it', async () => {
    await seedPool(h, { id: 'pool-quiet', tenantId: 'acme' });
    const [held, next] = await seedNodes('pool-quiet', 2, { rack: 'q1' }, false);
    // The first node's job ends on its own 25 s from now (2.5 times the old 10 s poll): its drain
    // sees the end at its endsAt, and only then may the second node's drain begin.
    const endsAt = new Date(Date.now() + 25_000);
    await allocate(h, held!, 'acme', endsAt);
    const started = await drainPool('pool-quiet', { maxConcurrent: 1, reason: 'quiet' });
    expect(started.status).toBe(202);
    expect(await workflowResult(h, poolDrainWorkflowId('pool-quiet'))).toBe('succeeded');
    const [first] = await drainsOf([held!]);
    expect(first!.completedAt!.getTime()).toBeGreaterThanOrEqual(endsAt.getTime());
    expect((await drainsOf([next!]))[0]?.status).toBe('succeeded');

    const history = await historyOf(poolDrainWorkflowId('pool-quiet'));
    // No look came from a timer: each look after the first followed a wake-up (a node drain that
    // ended) or a wave it requested. The old 10 s poll fired twice while the first node held it,
    // two looks more and 36 events in all (24 now); held 12 minutes, 450 events (now 36).
    expect(history.timersFired).toBe(0);
    expect(history.looks).toBeLessThanOrEqual(1 + history.wakes + history.waves);
    expect(history.wakes).toBe(2);
    expect(history.events).toBeLessThanOrEqual(30);
  }, 60_000);

  it('names the drained nodes that hold the disruption budget while its next nodes wait for it', async () => {
    await seedPool(h, { id: 'pool-full', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const hosts = ['gpu-f1', 'gpu-f2', 'gpu-f3'];
    const ids: string[] = [];
    for (const hostname of hosts) {
      const nodeId = await seedNode(h, {
        poolId: 'pool-full',
        tenantId: 'acme',
        hostname,
        labels: { rack: 'f1' },
      });
      await allocate(h, nodeId, 'acme');
      ids.push(nodeId);
    }
    const hostOf = (nodeId: string) => hosts[ids.indexOf(nodeId)]!;
    // Two at a time, each node's work released by force at once: the first node drained takes the
    // budget's only slot and keeps it while it stays cordoned, so the other two wait for it.
    const started = await drainPool('pool-full', { maxConcurrent: 2, deadline: '0s', reason: 'firmware' });
    expect(started.status).toBe(202);
    const operationId: string = started.body.operation.id;
    const blocked = await eventually(async () => {
      const p = await progressOf(operationId);
      return p.waitingFor?.counts.waitingForBudget === 2 && p.waitingFor.budget ? p : undefined;
    }, 20_000);
    const w = blocked.waitingFor!;
    expect(w.counts).toMatchObject({ drained: 1, draining: 0, waitingForBudget: 2, pending: 0 });
    const [holder] = w.nodes.drained;
    const [b, c] = w.nodes.waitingForBudget;
    expect(w.budget).toEqual({
      max: 1,
      used: 1,
      holders: [{ nodeId: holder, hostname: hostOf(holder!), draining: false }],
      waiting: [b!, c!].map((nodeId) => ({ nodeId, hostname: hostOf(nodeId) })),
    });
    // By hostname: who waits, who holds the slot, and the ways out.
    expect(progressInWords(blocked)).toContain(
      `${hostOf(b!)}, ${hostOf(c!)} wait for a slot in the pool's disruption budget: 1 of 1 nodes out, held by ` +
        `${hostOf(holder!)} (drained, still cordoned). To let the next go: uncordon it (or run a rolling ` +
        "maintenance, which puts each node back), raise the pool's maxUnavailable (at most 1 out now), or " +
        'cancel the pool drain.',
    );
    // The console and the CLI say it in the same words, from the record.
    const read = await call(h, 'GET', `/v1/operations/${operationId}`);
    expect(read.body.progress.waitingFor.budget).toEqual(w.budget);

    // Putting the holder back lets the next go; that one now holds the slot, and the last waits.
    await call(h, 'POST', `/v1/nodes/${holder}/uncordon`, { body: { reason: 'firmware done' } });
    const moved = await eventually(async () => {
      const p = await progressOf(operationId);
      return p.waitingFor?.counts.drained === 2 && p.waitingFor.counts.waitingForBudget === 1 ? p : undefined;
    }, 20_000);
    const second = moved.waitingFor!.nodes.drained.find((n) => n !== holder)!;
    const [last] = moved.waitingFor!.nodes.waitingForBudget;
    expect(moved.waitingFor!.budget!.holders).toEqual([
      { nodeId: second, hostname: hostOf(second), draining: false },
    ]);
    expect(progressInWords(moved)).toContain(
      `${hostOf(last!)} waits for a slot in the pool's disruption budget: 1 of 1 nodes out, held by ${hostOf(second)} (drained, still cordoned).`,
    );
    await call(h, 'POST', `/v1/nodes/${second}/uncordon`, { body: { reason: 'firmware done' } });
    expect(await h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-full')).result()).toBe('succeeded');
    const done = await progressOf(operationId);
    expect(done.waitingFor).toMatchObject({ counts: { drained: 3, waitingForBudget: 0 }, budget: null });
    expect(progressInWords(done)).toBe('Succeeded: 3 drained, 0 draining, 0 pending, 0 failed.');
    // Its timeline: a row a node by hostname, each span ending where the next begins. The first
    // node's work went by force at its deadline; the other two waited for the budget first.
    const rows = done.waitingFor!.timeline;
    expect(rows.map((row) => row.hostname).sort()).toEqual(hosts);
    const statesOf = (nodeId: string) => rows.find((row) => row.nodeId === nodeId)!.spans.map((s) => s.state);
    expect(statesOf(holder!).slice(-2)).toEqual(['forced-release', 'drained']);
    // A node waiting for a slot releases nothing by force before it has one.
    for (const nodeId of [b!, c!]) {
      expect(statesOf(nodeId).slice(-2)).toEqual(['waiting-for-budget', 'drained']);
      expect(statesOf(nodeId)).not.toContain('forced-release');
    }
    for (const { spans } of rows) {
      expect(spans.slice(1).map((s) => s.from)).toEqual(spans.slice(0, -1).map((s) => s.to));
      expect(spans.at(-1)!.to).toBeNull();
    }
    await recordHistory(h.temporal, poolDrainWorkflowId('pool-full'), 'pool-drain-waited-for-budget');
  }, 60_000);

  it('joins a drain already running on a node, and is woken when that drain ends', async () => {
    await seedPool(h, { id: 'pool-join', tenantId: 'acme' });
    const [byHand] = await seedNodes('pool-join', 1, { rack: 'j1' });
    const drained = await call(h, 'POST', `/v1/nodes/${byHand}/drain`, { body: { reason: 'by hand' } });
    expect(drained.status).toBe(202);
    const started = await drainPool('pool-join', { reason: 'rack' });
    const operationId: string = started.body.operation.id;
    await operationWhen(h, operationId, (op) => op.progress.waitingFor?.counts.draining === 1);
    const [op] = await h.db.select().from(operations).where(eq(operations.id, operationId));
    expect(op!.result).toMatchObject({ joined: [drained.body.operation.id] });
    // The joined drain is not the pool drain's child, yet its end wakes the pool drain: it ends
    // within moments, not at its next look minutes away.
    await releaseAll(byHand!);
    expect(await workflowResult(h, poolDrainWorkflowId('pool-join'))).toBe('succeeded');
    expect((await historyOf(poolDrainWorkflowId('pool-join'))).timersFired).toBe(0);
  });

  it('continues as new on a long drain and still drains every node once', async () => {
    await seedPool(h, { id: 'pool-long', tenantId: 'acme' });
    const nodes = await seedNodes('pool-long', 12, { rack: 'l1' });
    const started = await drainPool('pool-long', { maxConcurrent: 3, reason: 'long' });
    expect(started.status).toBe(202);
    const operationId: string = started.body.operation.id;
    // The same workflow, restarted with a small history budget.
    await operationWhen(h, operationId);
    const handle = h.temporal.workflow.getHandle(poolDrainWorkflowId('pool-long'));
    await handle.terminate('restart with a small continue-as-new budget');
    await h.temporal.workflow.start('poolDrain', {
      workflowId: poolDrainWorkflowId('pool-long'),
      taskQueue: h.taskQueue,
      args: [{ operationId, poolId: 'pool-long', continueAsNewAfter: 40 }],
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
