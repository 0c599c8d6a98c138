import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { disruptions, operations } from '../db/schema';
import { drainWorkflowId } from '../workflows/definitions';
import { readNode, drainProgress } from './support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { recordHistory } from './support/histories';

const h = useHarness();

function drain(nodeId: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body, headers });
}

async function liveAllocations(nodeId: string) {
  return (await call(h, 'GET', `/v1/allocations?nodeId=${nodeId}&live=true`)).body.items as { id: string }[];
}

const progressOf = (nodeId: string) => drainProgress(h, nodeId);

async function disruptionOf(nodeId: string) {
  const [row] = await h.db.select().from(disruptions).where(eq(disruptions.nodeId, nodeId));
  return row ? { state: row.state, operationId: row.operationId } : undefined;
}

async function poolWithNodes(
  poolId: string,
  count: number,
  policy: { maxUnavailable?: number | string } = {},
) {
  await seedPool(h, { id: poolId, tenantId: 'acme', grants: ['globex'], policy });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await seedNode(h, { poolId, tenantId: 'acme' }));
  return ids;
}

describe('drain deadline', () => {
  it('at its deadline releases every live allocation by force, once, and the node drains', async () => {
    const [nodeId] = await poolWithNodes('pool-dl1', 2);
    const first = await allocate(h, nodeId!, 'acme');
    const second = await allocate(h, nodeId!, 'acme', new Date(Date.now() + 3_600_000));
    const started = await drain(nodeId!, { reason: 'rack move', deadline: '0s' });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id as string;

    await eventually(async () =>
      (await eventsOf(h, nodeId!, 'node.drained')).length > 0 ? true : undefined,
    );
    expect(await liveAllocations(nodeId!)).toEqual([]);
    for (const id of [first, second]) {
      const allocation = await call(h, 'GET', `/v1/allocations/${id}`);
      expect(allocation.body).toMatchObject({ live: false, releasedBy: 'system:drain' });
      expect(allocation.body.releasedAt).not.toBeNull();
    }
    const op = await call(h, 'GET', `/v1/operations/${opId}`);
    expect(op.body).toMatchObject({ status: 'succeeded' });
    const progress = await progressOf(nodeId!);
    expect(progress).toMatchObject({ phase: 'drained', waitingFor: { budget: null } });
    const deadline = progress!.deadline!;
    expect(Math.abs(Date.parse(deadline) - Date.parse(started.body.operation.createdAt))).toBeLessThan(5_000);

    // One event per allocation, with the drain's operation and deadline, then the drained event.
    const forced = await eventsOf(h, nodeId!, 'allocation.force-released');
    expect(forced.map((e) => e.data.allocationId).sort()).toEqual([first, second].sort());
    for (const event of forced) {
      expect(event).toMatchObject({ actor: 'system:drain', operationId: opId });
      expect(event.data).toEqual({
        allocationId: event.data.allocationId,
        tenantId: 'acme',
        operationId: opId,
        deadline,
      });
    }
    expect((await eventsOf(h, nodeId!)).map((e) => e.type)).toEqual([
      'node.draining',
      'allocation.force-released',
      'allocation.force-released',
      'node.drained',
    ]);
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId!)).result()).toBe('drained');
    await recordHistory(h.temporal, drainWorkflowId(nodeId!), 'drain-forced-release');

    // The fleet feed shows them to the operator and to the allocations' tenant, not to another one.
    const feed = await call(h, 'GET', '/v1/events?type=allocation.');
    expect(feed.body.items.filter((e: { nodeId: string }) => e.nodeId === nodeId)).toHaveLength(2);
    const acme = await tenantKey(h, 'acme', ['compute:nodes:read']);
    const seen = await call(h, 'GET', '/v1/events?type=allocation.', { token: acme.secret });
    expect(seen.status).toBe(200);
    expect(seen.body.items.filter((e: { nodeId: string }) => e.nodeId === nodeId)).toHaveLength(2);
    const globex = await tenantKey(h, 'globex', ['compute:nodes:read']);
    const unseen = await call(h, 'GET', '/v1/events?type=allocation.', { token: globex.secret });
    expect(unseen.status).toBe(200);
    expect(unseen.body.items.filter((e: { nodeId: string }) => e.nodeId === nodeId)).toHaveLength(0);

    // Drained and still cordoned: the node holds its pool's slot until it is uncordoned.
    expect(await disruptionOf(nodeId!)).toEqual({ state: 'holding', operationId: opId });
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`)).status).toBe(200);
    expect(await disruptionOf(nodeId!)).toBeUndefined();
    expect(await eventsOf(h, nodeId!, 'allocation.force-released')).toHaveLength(2);
  });

  it("on a shared node's feed, each tenant sees its own allocations' forced releases only", async () => {
    const [nodeId] = await poolWithNodes('pool-dl8', 1);
    const mine = await allocate(h, nodeId!, 'acme');
    const theirs = await allocate(h, nodeId!, 'globex');
    await drain(nodeId!, { deadline: '0s' });
    await eventually(async () =>
      (await eventsOf(h, nodeId!, 'node.drained')).length > 0 ? true : undefined,
    );

    const feedOf = async (token?: string) => {
      const reply = await call(h, 'GET', `/v1/nodes/${nodeId}/events`, { token });
      expect(reply.status).toBe(200);
      return reply.body.items as { type: string; tenantId: string | null; data: Record<string, unknown> }[];
    };
    const forcedIn = (items: Awaited<ReturnType<typeof feedOf>>) =>
      items
        .filter((e) => e.type === 'allocation.force-released')
        .map((e) => ({ tenantId: e.tenantId, allocationId: e.data.allocationId }));
    const operator = await feedOf();
    expect(forcedIn(operator).sort((x, y) => x.tenantId!.localeCompare(y.tenantId!))).toEqual([
      { tenantId: 'acme', allocationId: mine },
      { tenantId: 'globex', allocationId: theirs },
    ]);
    const acme = await tenantKey(h, 'acme', ['compute:nodes:read'], 'dl8-acme');
    const globex = await tenantKey(h, 'globex', ['compute:nodes:read'], 'dl8-globex');
    const seenByAcme = await feedOf(acme.secret);
    const seenByGlobex = await feedOf(globex.secret);
    expect(forcedIn(seenByAcme)).toEqual([{ tenantId: 'acme', allocationId: mine }]);
    expect(forcedIn(seenByGlobex)).toEqual([{ tenantId: 'globex', allocationId: theirs }]);
    // The node's own events are for every tenant that sees the node; a type filter projects the same.
    const nodeEvents = ['node.draining', 'node.drained'];
    for (const seen of [seenByAcme, seenByGlobex]) {
      expect(seen.map((e) => e.type).filter((t) => t.startsWith('node.'))).toEqual(nodeEvents);
    }
    const filtered = await call(h, 'GET', `/v1/nodes/${nodeId}/events?type=allocation.`, {
      token: globex.secret,
    });
    expect(forcedIn(filtered.body.items)).toEqual([{ tenantId: 'globex', allocationId: theirs }]);
    // The fleet feed, filtered to the node, answers each the same.
    const fleet = await call(h, 'GET', `/v1/events?nodeId=${nodeId}&type=allocation.`, {
      token: acme.secret,
    });
    expect(forcedIn(fleet.body.items)).toEqual([{ tenantId: 'acme', allocationId: mine }]);
  });

  it('waits until a deadline ahead, then releases', async () => {
    const [nodeId] = await poolWithNodes('pool-dl2', 1);
    const allocation = await allocate(h, nodeId!, 'acme');
    await drain(nodeId!, { deadline: new Date(Date.now() + 2_000).toISOString() });
    const waiting = await eventually(async () => {
      const p = await progressOf(nodeId!);
      return p?.phase === 'waiting' ? p : undefined;
    });
    expect(Date.parse(waiting.nextCheckAt!)).toBeLessThanOrEqual(Date.parse(waiting.deadline!) + 300);
    expect((await liveAllocations(nodeId!)).map((a) => a.id)).toEqual([allocation]);
    await eventually(async () => ((await liveAllocations(nodeId!)).length === 0 ? true : undefined), 8_000);
    await eventually(async () =>
      (await eventsOf(h, nodeId!, 'node.drained')).length === 1 ? true : undefined,
    );
  });

  it('without a deadline never evicts, and a second request with one changes nothing', async () => {
    const [nodeId] = await poolWithNodes('pool-dl3', 1);
    const allocation = await allocate(h, nodeId!, 'acme');
    const started = await drain(nodeId!);
    await eventually(async () => ((await progressOf(nodeId!))?.phase === 'waiting' ? true : undefined));
    const again = await drain(nodeId!, { deadline: '0s' });
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(started.body.operation.id);
    // Woken by it or not, the drain looks again and still only waits.
    await h.temporal.workflow.getHandle(drainWorkflowId(nodeId!)).signal('wake', 'test');
    const progress = await eventually(async () => {
      const p = await progressOf(nodeId!);
      return p?.phase === 'waiting' ? p : undefined;
    });
    expect(progress.deadline).toBeNull();
    expect((await liveAllocations(nodeId!)).map((a) => a.id)).toEqual([allocation]);
    expect(await eventsOf(h, nodeId!, 'allocation.force-released')).toHaveLength(0);
    expect(await disruptionOf(nodeId!)).toBeUndefined();
  });

  it('two drains racing for the last slot: one takes it, the other waits and goes when it frees', async () => {
    const [a, b] = await poolWithNodes('pool-dl4', 3, { maxUnavailable: 1 });
    await allocate(h, a!, 'acme');
    await allocate(h, b!, 'acme');
    const [da, db] = await Promise.all([drain(a!, { deadline: '0s' }), drain(b!, { deadline: '0s' })]);
    expect([da.status, db.status]).toEqual([202, 202]);

    const { winner, loser, progress } = await eventually(async () => {
      const [pa, pb] = await Promise.all([progressOf(a!), progressOf(b!)]);
      if (pa?.phase === 'waiting-for-budget' && pb?.phase === 'drained')
        return { winner: b!, loser: a!, progress: pa };
      if (pb?.phase === 'waiting-for-budget' && pa?.phase === 'drained')
        return { winner: a!, loser: b!, progress: pb };
      return undefined;
    });
    expect(progress.waitingFor?.budget).toEqual({ max: 1, used: 1, holders: [winner] });
    expect(await disruptionOf(winner)).toMatchObject({ state: 'holding' });
    expect(await disruptionOf(loser)).toMatchObject({ state: 'waiting' });
    expect(await liveAllocations(loser)).toHaveLength(1);
    expect(await eventsOf(h, loser, 'allocation.force-released')).toHaveLength(0);
    const op = await call(h, 'GET', `/v1/operations/${(loser === a ? da : db).body.operation.id}`);
    expect(op.body.progress).toMatchObject({
      phase: 'waiting-for-budget',
      waitingFor: { allocations: 1, budget: { max: 1, used: 1, holders: [winner] } },
    });
    const details = await h.temporal.workflow
      .getHandle(drainWorkflowId(loser))
      .query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(details.currentDetails).toMatch(
      new RegExp(
        `^Past its deadline with 1 live allocation: waiting for a slot in the pool's disruption budget \\(1 of 1 nodes out: ${winner}\\) to release them by force\\. Next look \\d\\d:\\d\\dZ\\.$`,
      ),
    );

    // Uncordoning the holder frees the slot: the waiting drain is woken, not left to its next look
    // (minutes away: a drain waiting for the budget looks again only at an end, or every 5 minutes).
    expect((await call(h, 'POST', `/v1/nodes/${winner}/uncordon`)).status).toBe(200);
    await eventually(
      async () => ((await eventsOf(h, loser, 'node.drained')).length === 1 ? true : undefined),
      30_000,
      20,
    );
    expect(await eventsOf(h, loser, 'allocation.force-released')).toHaveLength(1);
    expect(await disruptionOf(loser)).toMatchObject({ state: 'holding' });
    expect(await disruptionOf(winner)).toBeUndefined();
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(loser)).result()).toBe('drained');
    await recordHistory(h.temporal, drainWorkflowId(loser), 'drain-waited-for-budget');
  });

  it('a node drained without force holds its slot until it is deleted, which wakes the waiting drain', async () => {
    const [a, b] = await poolWithNodes('pool-dl7', 2, { maxUnavailable: '50%' });
    const drainedA = await drain(a!);
    await eventually(async () => ((await eventsOf(h, a!, 'node.drained')).length === 1 ? true : undefined));
    expect(await disruptionOf(a!)).toEqual({ state: 'holding', operationId: drainedA.body.operation.id });
    await allocate(h, b!, 'acme');
    await drain(b!, { deadline: '0s' });
    const waiting = await eventually(async () => {
      const p = await progressOf(b!);
      return p?.phase === 'waiting-for-budget' ? p : undefined;
    });
    expect(waiting.waitingFor?.budget).toEqual({ max: 1, used: 1, holders: [a] });

    expect((await call(h, 'DELETE', `/v1/nodes/${a}`)).status).toBe(200);
    expect(await disruptionOf(a!)).toBeUndefined();
    // Woken by the delete's transaction, not left to its next look minutes away.
    await eventually(
      async () => ((await eventsOf(h, b!, 'node.drained')).length === 1 ? true : undefined),
      30_000,
      20,
    );
    expect(await liveAllocations(b!)).toEqual([]);
  });

  it('refuses a bad deadline with INVALID_INPUT before anything changes', async () => {
    const [nodeId] = await poolWithNodes('pool-dl5', 1);
    const before = await readNode(h, nodeId!);
    const bad = [
      'soon',
      '2h30m',
      '-5m',
      '31d',
      '2026-12-01',
      '2020-01-01T00:00:00Z',
      new Date(Date.now() + 40 * 86_400_000).toISOString(),
      '2026-13-01T00:00:00Z',
      'x'.repeat(65),
    ];
    for (const deadline of bad) {
      const reply = await drain(nodeId!, { deadline });
      expect(reply.status, deadline).toBe(400);
      expect(reply.body.error.code, deadline).toBe('INVALID_INPUT');
    }
    for (const deadline of [5, null, true]) {
      const reply = await drain(nodeId!, { deadline });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect(await readNode(h, nodeId!)).toEqual(before);
    expect(await eventsOf(h, nodeId!)).toEqual([]);
    expect(await h.db.select().from(operations).where(eq(operations.nodeId, nodeId!))).toEqual([]);
  });

  it('an Idempotency-Key binds the deadline as it was given', async () => {
    const [nodeId] = await poolWithNodes('pool-dl6', 1);
    await allocate(h, nodeId!, 'acme');
    const headers = { 'idempotency-key': 'drain-deadline-0001' };
    const first = await drain(nodeId!, { deadline: '2h' }, headers);
    expect(first.status).toBe(202);
    const again = await drain(nodeId!, { deadline: '2h' }, headers);
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(first.body.operation.id);
    const other = await drain(nodeId!, { deadline: '3h' }, headers);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
