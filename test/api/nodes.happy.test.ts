import { describe, expect, it } from 'vitest';
import { readNode, seedPoolNode } from '../support/builders';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('nodes: happy paths', () => {
  it('lists nodes with filters and keyset pagination', async () => {
    await seedPool(h, { id: 'pool-list', tenantId: 'listco' });
    await seedPool(h, { id: 'pool-other', tenantId: 'otherco' });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await seedNode(h, { poolId: 'pool-list', tenantId: 'listco' }));
    const outsider = await seedNode(h, {
      poolId: 'pool-other',
      tenantId: 'otherco',
      provisionState: 'pending',
    });

    const first = await call(h, 'GET', '/v1/nodes?poolId=pool-list&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.items.map((n: { id: string }) => n.id)).toEqual(ids.slice(0, 2));
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(h, 'GET', `/v1/nodes?poolId=pool-list&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((n: { id: string }) => n.id)).toEqual(ids.slice(2, 4));
    const third = await call(h, 'GET', `/v1/nodes?poolId=pool-list&limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body.items.map((n: { id: string }) => n.id)).toEqual(ids.slice(4));
    expect(third.body.nextCursor).toBeNull();

    await call(h, 'POST', `/v1/nodes/${ids[1]}/cordon`);
    const cordoned = await call(h, 'GET', '/v1/nodes?poolId=pool-list&cordoned=true');
    expect(cordoned.body.items.map((n: { id: string }) => n.id)).toEqual([ids[1]]);
    const pending = await call(h, 'GET', '/v1/nodes?provisionState=pending');
    expect(pending.body.items.map((n: { id: string }) => n.id)).toEqual([outsider]);
    const byTenant = await call(h, 'GET', '/v1/nodes?tenantId=otherco');
    expect(byTenant.body.items.map((n: { id: string }) => n.id)).toEqual([outsider]);
    const bySite = await call(h, 'GET', '/v1/nodes?siteId=fra1&access=allowed&liveness=alive&limit=50');
    expect(bySite.body.items.length).toBeGreaterThanOrEqual(6);
  });

  it('shows a node with its labels, conditions and session', async () => {
    await seedPool(h, { id: 'pool-show', tenantId: 'acme' });
    const id = await seedNode(h, {
      poolId: 'pool-show',
      tenantId: 'acme',
      hostname: 'gpu-b7-03',
      labels: { rack: 'b7' },
    });
    const reply = await call(h, 'GET', `/v1/nodes/${id}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      id,
      tenantId: 'acme',
      poolId: 'pool-show',
      hostname: 'gpu-b7-03',
      provisionState: 'adopted',
      access: 'allowed',
      cordoned: false,
      maintenance: false,
      noScheduleReasons: [],
      labels: [{ key: 'rack', value: 'b7', source: 'operator' }],
      conditions: [],
      session: { connectivity: 'connected' },
      identityGeneration: 1,
      version: 1,
      deletedAt: null,
    });
  });

  it('cordon moves one axis, bumps the version and appends one event; again changes nothing', async () => {
    const id = await seedPoolNode(h, 'pool-c');
    const before = await readNode(h, id);
    const cordoned = await call(h, 'POST', `/v1/nodes/${id}/cordon`, {
      body: { reason: 'BIOS update window', version: 1 },
    });
    expect(cordoned.status).toBe(200);
    expect(cordoned.body).toEqual({ ...before, cordoned: true, version: 2, updatedAt: expect.any(String) });

    const again = await call(h, 'POST', `/v1/nodes/${id}/cordon`);
    expect(again.body.version).toBe(2);
    const events = await eventsOf(h, id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'node.cordoned',
      reason: 'BIOS update window',
      actor: 'key:bootstrap-operator',
    });

    const uncordoned = await call(h, 'POST', `/v1/nodes/${id}/uncordon`, { headers: { 'if-match': '"2"' } });
    expect(uncordoned.body).toMatchObject({ cordoned: false, version: 3 });
    const noop = await call(h, 'POST', `/v1/nodes/${id}/uncordon`);
    expect(noop.body.version).toBe(3);
    expect((await eventsOf(h, id)).map((e) => e.type)).toEqual(['node.cordoned', 'node.uncordoned']);
  });

  it('pages events oldest first and filters them by type prefix', async () => {
    const id = await seedPoolNode(h, 'pool-e');
    for (let i = 0; i < 3; i++) {
      await call(h, 'POST', `/v1/nodes/${id}/cordon`);
      await call(h, 'POST', `/v1/nodes/${id}/uncordon`);
    }
    const page1 = await call(h, 'GET', `/v1/nodes/${id}/events?limit=4`);
    expect(page1.body.items.map((e: { type: string }) => e.type)).toEqual([
      'node.cordoned',
      'node.uncordoned',
      'node.cordoned',
      'node.uncordoned',
    ]);
    const page2 = await call(h, 'GET', `/v1/nodes/${id}/events?limit=4&cursor=${page1.body.nextCursor}`);
    expect(page2.body.items).toHaveLength(2);
    expect(page2.body.nextCursor).toBeNull();
    const onlyCordons = await call(h, 'GET', `/v1/nodes/${id}/events?type=node.cordon`);
    expect(onlyCordons.body.items).toHaveLength(3);
    const security = await call(h, 'GET', `/v1/nodes/${id}/events?type=security.`);
    expect(security.body.items).toEqual([]);
  });
});
