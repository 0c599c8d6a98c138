import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { allocations } from '../../db/schema';
import { placeAllocation, seedPoolNode, setNode } from '../support/builders';
import { allocate, call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('allocations', () => {
  it('places on a schedulable node and releases idempotently', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    const endsAt = new Date(Date.now() + 60_000).toISOString();
    const created = await call(h, 'POST', '/v1/allocations', {
      body: { nodeId, tenantId: 'acme', kind: 'deployment', endsAt },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      nodeId,
      tenantId: 'acme',
      kind: 'deployment',
      endsAt,
      releasedAt: null,
    });
    expect(created.body.id).toMatch(/^alloc_/);

    const released = await call(h, 'POST', `/v1/allocations/${created.body.id}/release`);
    expect(released.status).toBe(200);
    expect(released.body.releasedAt).toEqual(expect.any(String));
    const again = await call(h, 'POST', `/v1/allocations/${created.body.id}/release`);
    expect(again.body.releasedAt).toBe(released.body.releasedAt);
  });

  it('refuses a node placement does not accept with NOT_SCHEDULABLE and the reasons', async () => {
    const cordoned = await seedPoolNode(h, 'pool-a');
    await call(h, 'POST', `/v1/nodes/${cordoned}/cordon`);
    const pending = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme', provisionState: 'pending' });
    const tainted = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme' });
    await setNode(h, tainted, {
      noScheduleReasons: ['taint:dedicated=globex'],
      maintenance: true,
      access: 'blocked',
    });

    const cases = [
      [cordoned, ['cordoned']],
      [pending, ['provisionState:pending']],
      [tainted, ['blocked', 'maintenance', 'taint:dedicated=globex']],
    ] as const;
    for (const [nodeId, reasons] of cases) {
      const reply = await placeAllocation(h, nodeId);
      expect(reply.status).toBe(409);
      expect(reply.body.error).toMatchObject({ code: 'NOT_SCHEDULABLE', details: { reasons } });
    }
    const stored = await h.db.select().from(allocations);
    expect(stored.filter((a) => [cordoned, pending, tainted].includes(a.nodeId))).toEqual([]);
  });

  it('a dedication admits its tenant only', async () => {
    await seedPool(h, { id: 'pool-d', tenantId: 'acme', grants: ['globex'] });
    const nodeId = await seedNode(h, { poolId: 'pool-d', tenantId: 'acme' });
    await setNode(h, nodeId, { noScheduleReasons: ['taint:dedicated=acme'] });
    expect((await placeAllocation(h, nodeId)).status).toBe(201);
    const other = await placeAllocation(h, nodeId, 'globex');
    expect(other.status).toBe(409);
    expect(other.body.error.details.reasons).toEqual(['taint:dedicated=acme']);
  });

  it('validates input', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    for (const body of [
      {},
      { nodeId, tenantId: 'acme' },
      { nodeId, tenantId: 'acme', kind: 'batch' },
      { nodeId: 'node_1', tenantId: 'acme', kind: 'job' },
      { nodeId, tenantId: 'Acme', kind: 'job' },
      { nodeId, tenantId: 'acme', kind: 'job', endsAt: 'tomorrow' },
      { nodeId, tenantId: 'acme', kind: 'job', endsAt: '2001-01-01T00:00:00Z' },
      { nodeId, tenantId: 'acme', kind: 'job', extra: 1 },
    ]) {
      const reply = await call(h, 'POST', '/v1/allocations', { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await call(h, 'POST', '/v1/allocations/alloc_x/release')).status).toBe(400);
    expect((await call(h, 'POST', `/v1/allocations/${newId('alloc')}/release`)).status).toBe(404);
    expect((await placeAllocation(h, newId('node'))).status).toBe(404);
  });

  it('tenant keys act for their own tenant on nodes they can see', async () => {
    const nodeId = await seedPoolNode(h, 'pool-t', 'hooli');
    const foreignNode = await seedPoolNode(h, 'pool-x', 'piedpiper');
    const writer = await tenantKey(h, 'hooli', ['compute:allocations:write'], 'hooli-writer');
    const reader = await tenantKey(h, 'hooli', ['compute:nodes:read'], 'hooli-reader');

    const own = await placeAllocation(h, nodeId, 'hooli', writer.secret);
    expect(own.status).toBe(201);
    const forOther = await placeAllocation(h, nodeId, 'piedpiper', writer.secret);
    expect(forOther.status).toBe(403);
    const onForeign = await placeAllocation(h, foreignNode, 'hooli', writer.secret);
    expect(onForeign.status).toBe(404);
    const noAction = await placeAllocation(h, nodeId, 'hooli', reader.secret);
    expect(noAction.status).toBe(403);
    expect(
      (await call(h, 'POST', `/v1/allocations/${own.body.id}/release`, { token: reader.secret })).status,
    ).toBe(403);
    const foreignAlloc = await allocate(h, foreignNode, 'piedpiper');
    expect(
      (await call(h, 'POST', `/v1/allocations/${foreignAlloc}/release`, { token: writer.secret })).status,
    ).toBe(404);
    const [stillLive] = await h.db.select().from(allocations).where(eq(allocations.id, foreignAlloc));
    expect(stillLive?.releasedAt).toBeNull();
    expect((await placeAllocation(h, nodeId, 'hooli', null)).status).toBe(401);
  });
});
