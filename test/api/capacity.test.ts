import { describe, expect, it } from 'vitest';
import type { nodes } from '../../db/schema';
import { setNode } from '../support/builders';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('pool capacity', () => {
  it('happy: counts every live node in exactly one bucket, first match wins', async () => {
    await seedPool(h, { id: 'pool-c', tenantId: 'acme' });
    const axes: Partial<typeof nodes.$inferInsert>[] = [
      {},
      {},
      { maintenance: true, cordoned: true, liveness: 'unreachable' },
      { liveness: 'unreachable', cordoned: true, noScheduleReasons: ['unreachable'] },
      { liveness: 'lost' },
      { cordoned: true, noScheduleReasons: ['taint:rma'] },
      { noScheduleReasons: ['taint:dedicated=acme'] },
      { noScheduleReasons: ['condition:GpuXidError'] },
      { deletedAt: new Date() },
      // Out of service for good: not capacity that is unreachable for a while.
      { provisionState: 'decommissioned', liveness: 'decommissioned', cordoned: true },
    ];
    for (const patch of axes) {
      const id = await seedNode(h, { poolId: 'pool-c', tenantId: 'acme' });
      await setNode(h, id, { ...patch, version: 1 });
    }
    const reply = await call(h, 'GET', '/v1/pools/pool-c/capacity');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      poolId: 'pool-c',
      total: 8,
      buckets: { maintenance: 1, unreachable: 2, cordoned: 1, unhealthy: 2, schedulable: 2 },
    });
    const empty = await call(h, 'POST', '/v1/pools', {
      body: { id: 'pool-empty', kind: 'provider', siteId: 'ams2' },
    });
    expect(empty.status).toBe(201);
    expect((await call(h, 'GET', '/v1/pools/pool-empty/capacity')).body).toEqual({
      poolId: 'pool-empty',
      total: 0,
      buckets: { maintenance: 0, unreachable: 0, cordoned: 0, unhealthy: 0, schedulable: 0 },
    });
  });

  it('error and security: bad ids, unknown and invisible pools, missing action', async () => {
    await seedPool(h, { id: 'pool-mine', tenantId: 'hooli' });
    await seedPool(h, { id: 'pool-theirs', tenantId: 'piedpiper' });
    expect((await call(h, 'GET', '/v1/pools/Pool_C/capacity')).status).toBe(400);
    expect((await call(h, 'GET', '/v1/pools/pool-none/capacity')).status).toBe(404);
    const reader = await tenantKey(h, 'hooli', ['compute:nodes:read'], 'hooli-cap');
    expect((await call(h, 'GET', '/v1/pools/pool-mine/capacity', { token: reader.secret })).status).toBe(200);
    expect((await call(h, 'GET', '/v1/pools/pool-theirs/capacity', { token: reader.secret })).status).toBe(
      404,
    );
    const writer = await tenantKey(h, 'hooli', ['compute:nodes:cordon'], 'hooli-cordon');
    expect((await call(h, 'GET', '/v1/pools/pool-mine/capacity', { token: writer.secret })).status).toBe(403);
    expect((await call(h, 'GET', '/v1/pools/pool-mine/capacity', { token: null })).status).toBe(401);
  });
});
