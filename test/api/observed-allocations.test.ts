import { describe, expect, it } from 'vitest';
import { seedPoolNode } from '../support/builders';
import { call, eventsOf, seedPool, seedNode, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { snapshot } from '../support/snapshot';

const h = useHarness({ worker: false });

/** What a Slurm bridge sends for job `jobId` on `nodeId`. */
const job = (nodeId: string, jobId: string, tenantId = 'acme') => ({
  nodeId,
  tenantId,
  kind: 'job',
  endsAt: new Date(Date.now() + 3_600_000).toISOString(),
  source: 'slurm:hpc1',
  externalId: jobId,
});

describe('observed allocations', () => {
  it('are recorded even where placement would refuse, with the refusals on the event; the same job again is the same allocation', async () => {
    const nodeId = await seedPoolNode(h, 'pool-obs');
    expect(
      (await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { reason: 'rack work' } })).status,
    ).toBe(200);
    // A placement is refused there; the scheduler's job, which already runs, is recorded.
    const placed = await call(h, 'POST', '/v1/allocations', {
      body: { nodeId, tenantId: 'acme', kind: 'job' },
    });
    expect(placed.body.error.code).toBe('NOT_SCHEDULABLE');
    const first = await call(h, 'POST', '/v1/allocations', { body: job(nodeId, '4711') });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      nodeId,
      tenantId: 'acme',
      source: 'slurm:hpc1',
      externalId: '4711',
      live: true,
    });
    const observed = await eventsOf(h, nodeId, 'allocation.observed');
    expect(observed).toMatchObject([
      {
        actor: 'key:bootstrap-operator',
        data: {
          allocationId: first.body.id,
          tenantId: 'acme',
          source: 'slurm:hpc1',
          externalId: '4711',
          refusals: ['cordoned'],
        },
      },
    ]);

    const before = await snapshot(h);
    const again = await call(h, 'POST', '/v1/allocations', { body: job(nodeId, '4711') });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await snapshot(h)).toEqual(before);

    // Found by what the scheduler calls it.
    const found = await call(h, 'GET', `/v1/allocations?source=slurm:hpc1&externalId=4711&live=true`);
    expect(found.body.items.map((a: { id: string }) => a.id)).toEqual([first.body.id]);
  });

  it('a live job recorded on another node is CONFLICT until it is released; twenty racing records make one', async () => {
    const [a, b] = [await seedPoolNode(h, 'pool-move'), await seedPoolNode(h, 'pool-move')];
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => call(h, 'POST', '/v1/allocations', { body: job(a, '900_3') })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201]);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    const id = replies[0]!.body.id as string;

    const before = await snapshot(h);
    const moved = await call(h, 'POST', '/v1/allocations', { body: job(b, '900_3') });
    expect(moved.status).toBe(409);
    expect(moved.body.error).toMatchObject({ code: 'CONFLICT', details: { allocationId: id, nodeId: a } });
    expect(await snapshot(h)).toEqual(before);

    // Requeued and started elsewhere: the bridge releases the old record, then records the new.
    expect((await call(h, 'POST', `/v1/allocations/${id}/release`)).status).toBe(200);
    const elsewhere = await call(h, 'POST', '/v1/allocations', { body: job(b, '900_3') });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.id).not.toBe(id);
  });

  it('take compute:allocations:observe and the tenant of the key; bad input is 400 and changes nothing', async () => {
    await seedPool(h, { id: 'pool-obs-t', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-t' });
    const writer = await tenantKey(h, 'acme', ['compute:allocations:write'], 'acme-writer');
    const observer = await tenantKey(h, 'acme', ['compute:allocations:observe'], 'acme-bridge');
    const before = await snapshot(h);
    const refused = await call(h, 'POST', '/v1/allocations', {
      token: writer.secret,
      body: job(nodeId, '1'),
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual({ action: 'compute:allocations:observe' });
    const otherTenant = await call(h, 'POST', '/v1/allocations', {
      token: observer.secret,
      body: job(nodeId, '2', 'globex'),
    });
    expect(otherTenant.status).toBe(403);
    for (const body of [
      { ...job(nodeId, '3'), externalId: undefined },
      { ...job(nodeId, '3'), source: undefined },
      { ...job(nodeId, '3'), source: 'slurm' },
      { ...job(nodeId, '3'), source: 'Slurm:hpc1' },
      { ...job(nodeId, '3'), externalId: '../4711' },
      { ...job(nodeId, '3'), externalId: 'x'.repeat(254) },
    ]) {
      const reply = await call(h, 'POST', '/v1/allocations', { token: observer.secret, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect(await snapshot(h)).toEqual(before);
    const recorded = await call(h, 'POST', '/v1/allocations', {
      token: observer.secret,
      body: job(nodeId, '4'),
    });
    expect(recorded.status).toBe(201);
    // The bridge's key releases what its scheduler ended, and nothing placed through Drydock.
    const placed = await call(h, 'POST', '/v1/allocations', {
      token: writer.secret,
      body: { nodeId, tenantId: 'acme', kind: 'job' },
    });
    const notObserved = await call(h, 'POST', `/v1/allocations/${placed.body.id}/release`, {
      token: observer.secret,
    });
    expect(notObserved.status).toBe(403);
    expect(notObserved.body.error.details).toEqual({ action: 'compute:allocations:write' });
    expect((await call(h, 'GET', `/v1/allocations/${placed.body.id}`)).body.live).toBe(true);
    const released = await call(h, 'POST', `/v1/allocations/${recorded.body.id}/release`, {
      token: observer.secret,
    });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ live: false, releasedBy: 'key:acme-bridge' });
  });
});
