import { describe, expect, it } from 'vitest';
import { progressInWords } from '../domain/progress';
import { drainProgress, operationWhen } from './support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { snapshot } from './support/snapshot';

const h = useHarness();

/** Records Slurm job `jobId` running on `nodeId`, as a Slurm bridge does. */
async function observed(nodeId: string, jobId: string): Promise<string> {
  const reply = await call(h, 'POST', '/v1/allocations', {
    body: { nodeId, tenantId: 'acme', kind: 'job', source: 'slurm:hpc1', externalId: jobId },
  });
  expect(reply.status).toBe(201);
  return reply.body.id as string;
}

const allocation = async (id: string) => (await call(h, 'GET', `/v1/allocations/${id}`)).body;

describe('a drain past its deadline on a node running observed work', () => {
  it('releases what Drydock placed, asks the scheduler to end the rest once, and drains when the bridge releases it', async () => {
    await seedPool(h, { id: 'pool-obs-drain', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-drain' });
    const placed = await allocate(h, nodeId, 'acme');
    const job = await observed(nodeId, '4711');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'driver roll-out', deadline: '0s' },
    });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id as string;

    // The deadline passed at once: the placed allocation goes, the job's end is asked of Slurm.
    const [asked] = await eventually(async () => {
      const events = await eventsOf(h, nodeId, 'allocation.end-requested');
      return events.length > 0 ? events : undefined;
    });
    expect(asked).toMatchObject({
      actor: 'system:drain',
      operationId: opId,
      data: {
        allocationId: job,
        tenantId: 'acme',
        source: 'slurm:hpc1',
        externalId: '4711',
        operationId: opId,
      },
    });
    expect(await allocation(placed)).toMatchObject({ live: false, releasedBy: 'system:drain' });
    expect(await allocation(job)).toMatchObject({
      live: true,
      releasedAt: null,
      endRequestedAt: expect.any(String),
    });
    // Still draining, waiting for the job: not drained while it runs.
    const waiting = await drainProgress(h, nodeId);
    expect(waiting).toMatchObject({ phase: 'waiting', waitingFor: { allocations: 1, items: [{ id: job }] } });
    // The passed deadline is no reason to look again soon: the bridge's release wakes the drain.
    expect(Date.parse(waiting!.nextCheckAt!) - Date.now()).toBeGreaterThan(60_000);
    expect(await eventsOf(h, nodeId, 'node.drained')).toEqual([]);
    expect((await eventsOf(h, nodeId, 'allocation.force-released')).map((e) => e.data.allocationId)).toEqual([
      placed,
    ]);

    // The bridge sees the job gone from Slurm and releases it: the drain ends at once.
    expect((await call(h, 'POST', `/v1/allocations/${job}/release`)).status).toBe(200);
    const drained = await operationWhen(h, opId, (op) => op.status === 'succeeded');
    expect(drained.progress.phase).toBe('drained');
    // Asked once, however many looks the drain took.
    expect(await eventsOf(h, nodeId, 'allocation.end-requested')).toHaveLength(1);
    // The bridge's release of work the deadline ended is that drain's forced release.
    const forced = await eventsOf(h, nodeId, 'allocation.force-released');
    expect(forced.map((e) => e.data.allocationId)).toEqual([placed, job]);
    expect(forced[1]).toMatchObject({
      actor: 'key:bootstrap-operator',
      operationId: opId,
      data: { allocationId: job, tenantId: 'acme', operationId: opId, deadline: expect.any(String) },
    });
  });

  it('asks at once for the end of work recorded on the node after its deadline passed', async () => {
    await seedPool(h, { id: 'pool-obs-late', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-late' });
    const first = await observed(nodeId, '5001');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'late work', deadline: '0s' },
    });
    const opId = started.body.operation.id as string;
    await eventually(async () => (await allocation(first)).endRequestedAt !== null);
    // The scheduler had placed one more before it saw the node drained: the drain's next look would
    // be minutes away; the record wakes it.
    const late = await observed(nodeId, '5002');
    await eventually(async () => (await allocation(late)).endRequestedAt !== null);
    const waiting = await operationWhen(h, opId, (op) => op.progress.waitingFor?.allocations === 2);
    expect(waiting.status).toBe('running');
  });

  it("records what the scheduler answered: the drain's progress lists it and says it in words", async () => {
    await seedPool(h, { id: 'pool-obs-ending', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-ending' });
    const [first, second] = [await observed(nodeId, '4711'), await observed(nodeId, '4712')];
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'driver roll-out', deadline: '0s' },
    });
    const opId = started.body.operation.id as string;
    await eventually(async () =>
      (await eventsOf(h, nodeId, 'allocation.end-requested')).length === 2 ? true : undefined,
    );
    const asked = await operationWhen(h, opId, (op) =>
      op.progress.waitingFor?.items.every((i: { endRequestedAt: string | null }) => i.endRequestedAt),
    );
    expect(asked.progress.waitingFor.items).toEqual([
      {
        id: first,
        endsAt: null,
        source: 'slurm:hpc1',
        externalId: '4711',
        endRequestedAt: expect.any(String),
        ending: null,
      },
      {
        id: second,
        endsAt: null,
        source: 'slurm:hpc1',
        externalId: '4712',
        endRequestedAt: expect.any(String),
        ending: null,
      },
    ]);

    const bridge = await tenantKey(h, 'acme', ['compute:allocations:observe'], 'acme-ending-bridge');
    const answered = await call(h, 'POST', `/v1/allocations/${first}/ending`, {
      token: bridge.secret,
      body: { action: 'requeue', answer: 'requeued' },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      id: first,
      live: true,
      ending: { action: 'requeue', answer: 'requeued', at: expect.any(String) },
    });
    expect(await eventsOf(h, nodeId, 'allocation.ending')).toMatchObject([
      {
        actor: 'key:acme-ending-bridge',
        tenantId: 'acme',
        data: {
          allocationId: first,
          tenantId: 'acme',
          source: 'slurm:hpc1',
          externalId: '4711',
          action: 'requeue',
          answer: 'requeued',
        },
      },
    ]);
    // The answer wakes the drain (its next look is minutes off): its record shows it at once.
    const shown = await operationWhen(
      h,
      opId,
      (op) => op.progress.waitingFor.items[0].ending !== null,
      10_000,
    );
    expect(shown.progress.waitingFor.items[0].ending).toEqual(answered.body.ending);
    expect(progressInWords(shown.progress, Date.now())).toMatch(
      /^Past its deadline: asked slurm:hpc1 to end 2: 4711 \(requeue: requeued\), 4712 \(no answer yet\)\./,
    );

    // The same answer again moves only when it was said (no event, nothing else); another one is recorded.
    const before = await snapshot(h);
    const again = await call(h, 'POST', `/v1/allocations/${first}/ending`, {
      token: bridge.secret,
      body: { action: 'requeue', answer: 'requeued' },
    });
    expect({ ...again.body, ending: { ...again.body.ending, at: null } }).toEqual({
      ...answered.body,
      ending: { ...answered.body.ending, at: null },
    });
    expect(Date.parse(again.body.ending.at)).toBeGreaterThan(Date.parse(answered.body.ending.at));
    const after = await snapshot(h);
    expect({ ...after, allocations: null }).toEqual({ ...before, allocations: null });
    expect(after.allocations).not.toEqual(before.allocations);
    const refused = await call(h, 'POST', `/v1/allocations/${second}/ending`, {
      body: { action: 'requeue', answer: 'requeue refused: job is not requeueable' },
    });
    expect(refused.body.ending).toMatchObject({ action: 'requeue' });
    const cancelled = await call(h, 'POST', `/v1/allocations/${second}/ending`, {
      body: { action: 'cancel', answer: 'cancelled' },
    });
    expect(cancelled.body.ending).toMatchObject({ action: 'cancel', answer: 'cancelled' });
    expect(await eventsOf(h, nodeId, 'allocation.ending')).toHaveLength(3);

    // Gone from Slurm: released, the drain ends, and an answer now is refused.
    for (const id of [first, second])
      expect((await call(h, 'POST', `/v1/allocations/${id}/release`)).status).toBe(200);
    await operationWhen(h, opId, (op) => op.status === 'succeeded');
    const late = await call(h, 'POST', `/v1/allocations/${first}/ending`, {
      body: { action: 'cancel', answer: 'gone' },
    });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({
      code: 'INVALID_STATE',
      message: expect.stringContaining('is released'),
    });
  });

  it('records an eviction answered before the deadline, on a draining node: the drain shows it, and the release is no forced one', async () => {
    await seedPool(h, { id: 'pool-obs-evict', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-evict' });
    const reply = await call(h, 'POST', '/v1/allocations', {
      body: {
        nodeId,
        tenantId: 'acme',
        kind: 'job',
        source: 'kubernetes:k1',
        externalId: 'default/web-1/uid-1',
      },
    });
    expect(reply.status).toBe(201);
    const pod = reply.body.id as string;
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'kernel update', deadline: '2h' },
    });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id as string;

    // Kubernetes asks politely from the drain's start: a PodDisruptionBudget refuses for now.
    const answer = 'refused: eviction blocked by PodDisruptionBudget default/web (3 of 4 available)';
    const answered = await call(h, 'POST', `/v1/allocations/${pod}/ending`, {
      body: { action: 'evict', answer },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      id: pod,
      live: true,
      endRequestedAt: null,
      ending: { action: 'evict', answer, at: expect.any(String) },
    });
    expect(await eventsOf(h, nodeId, 'allocation.ending')).toMatchObject([
      { data: { allocationId: pod, source: 'kubernetes:k1', action: 'evict', answer } },
    ]);
    const shown = await operationWhen(h, opId, (op) => Boolean(op.progress.waitingFor?.items[0]?.ending));
    expect(progressInWords(shown.progress, Date.now())).toMatch(
      /^Waiting for 1 live allocation until .+; asked kubernetes:k1 to evict 1: default\/web-1\/uid-1 \(evict: refused: eviction blocked by PodDisruptionBudget .*…\)\./,
    );

    // The eviction went through: the pod is gone, released as any work that ended before the deadline.
    expect((await call(h, 'POST', `/v1/allocations/${pod}/release`)).status).toBe(200);
    await operationWhen(h, opId, (op) => op.status === 'succeeded');
    expect(await eventsOf(h, nodeId, 'allocation.end-requested')).toEqual([]);
    expect(await eventsOf(h, nodeId, 'allocation.force-released')).toEqual([]);
  });

  it('an answer is refused for work no drain asked to end, or placed through Drydock; the keys are those of a release', async () => {
    await seedPool(h, { id: 'pool-obs-noend', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-noend' });
    const job = await observed(nodeId, '5150');
    const placed = await allocate(h, nodeId, 'acme');
    const writer = await tenantKey(h, 'acme', ['compute:allocations:write'], 'acme-noend-writer');
    const stranger = await tenantKey(h, 'globex', ['compute:allocations:observe'], 'globex-noend-bridge');
    const answer = { action: 'cancel', answer: 'cancelled' };

    const before = await snapshot(h);
    for (const action of ['cancel', 'evict']) {
      const notAsked = await call(h, 'POST', `/v1/allocations/${job}/ending`, {
        body: { ...answer, action },
      });
      expect(notAsked.status).toBe(409);
      expect(notAsked.body.error).toMatchObject({
        code: 'INVALID_STATE',
        message: `no end of allocation ${job} is due from slurm:hpc1: no drain is open on its node and none asked its end`,
        details: { allocationId: job, endRequestedAt: null, draining: false },
      });
    }
    const notObserved = await call(h, 'POST', `/v1/allocations/${placed}/ending`, { body: answer });
    expect(notObserved.status).toBe(409);
    expect(notObserved.body.error.message).toContain('not observed');
    const withoutAction = await call(h, 'POST', `/v1/allocations/${job}/ending`, {
      token: writer.secret,
      body: answer,
    });
    expect(withoutAction.status).toBe(403);
    expect(withoutAction.body.error.details).toEqual({ action: 'compute:allocations:observe' });
    expect(
      (await call(h, 'POST', `/v1/allocations/${job}/ending`, { token: stranger.secret, body: answer }))
        .status,
    ).toBe(404);
    for (const body of [
      {},
      { action: 'kill', answer: 'x' },
      { action: 'cancel', answer: '' },
      { action: 'cancel', answer: 'a'.repeat(501) },
      { action: 'cancel', answer: 'done\u0007' },
      { ...answer, extra: true },
    ]) {
      const reply = await call(h, 'POST', `/v1/allocations/${job}/ending`, { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect(await snapshot(h)).toEqual(before);
  });
});
