import { describe, expect, it } from 'vitest';
import { NODE_COUNTS } from '../../domain/node-state';
import { setNode } from '../support/builders';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('GET /v1/node-summary', () => {
  it('counts by state as the filtered lists do, and groups the nodes by a label in reading order', async () => {
    await seedPool(h, { id: 'pool-sum', tenantId: 'acme' });
    const node = (hostname: string, rack?: string) =>
      seedNode(h, { poolId: 'pool-sum', hostname, labels: rack ? { rack, 'gpu.model': 'H100' } : {} });
    const b10 = await node('gpu-b10-01', 'b10');
    const lost = await node('gpu-b7-10', 'b7');
    const draining = await node('gpu-b7-2', 'b7');
    const quarantined = await node('gpu-b7-1', 'b7');
    const loose = await node('spare-1');
    await setNode(h, lost, { liveness: 'lost', cordoned: true });
    await setNode(h, draining, { cordoned: true, noScheduleReasons: ['draining'] });
    await setNode(h, quarantined, { maintenance: true, noScheduleReasons: ['quarantined'] });
    await setNode(h, loose, { access: 'blocked' });

    const reply = await call(h, 'GET', '/v1/node-summary?poolId=pool-sum');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({
      total: 5,
      counts: {
        alive: 4,
        unreachable: 0,
        lost: 1,
        cordoned: 2,
        draining: 1,
        maintenance: 1,
        quarantined: 1,
        pendingApproval: 0,
      },
      groupBy: 'rack',
      labelKeys: ['gpu.model', 'rack'],
      groups: [
        {
          value: 'b7',
          nodes: [
            { id: quarantined, hostname: 'gpu-b7-1', poolId: 'pool-sum', state: 'quarantined' },
            { id: draining, hostname: 'gpu-b7-2', poolId: 'pool-sum', state: 'draining' },
            { id: lost, hostname: 'gpu-b7-10', poolId: 'pool-sum', state: 'lost' },
          ],
        },
        {
          value: 'b10',
          nodes: [{ id: b10, hostname: 'gpu-b10-01', poolId: 'pool-sum', state: 'schedulable' }],
        },
        { value: null, nodes: [{ id: loose, hostname: 'spare-1', poolId: 'pool-sum', state: 'blocked' }] },
      ],
    });
    // Each count is the length of the list its filter gives.
    for (const { name, filter } of NODE_COUNTS) {
      const list = await call(h, 'GET', `/v1/nodes?poolId=pool-sum&limit=200&${new URLSearchParams(filter)}`);
      expect(list.body.items.length, name).toBe(reply.body.counts[name]);
    }

    const byModel = await call(h, 'GET', '/v1/node-summary?poolId=pool-sum&groupBy=gpu.model&cordoned=true');
    expect(byModel.body).toMatchObject({
      total: 2,
      groupBy: 'gpu.model',
      groups: [{ value: 'H100', nodes: [{ hostname: 'gpu-b7-2' }, { hostname: 'gpu-b7-10' }] }],
    });
  });

  it('a tenant sees its own nodes only; a bad groupBy or filter is refused before anything is read', async () => {
    await seedPool(h, { id: 'pool-mine', tenantId: 'mine' });
    await seedPool(h, { id: 'pool-theirs', tenantId: 'theirs' });
    await seedNode(h, { poolId: 'pool-mine', hostname: 'm-1' });
    await seedNode(h, { poolId: 'pool-theirs', hostname: 't-1' });
    const key = await tenantKey(h, 'mine', ['compute:nodes:read']);
    const mine = await call(h, 'GET', '/v1/node-summary', { token: key.secret });
    expect(
      mine.body.groups.flatMap((g: { nodes: { hostname: string }[] }) => g.nodes.map((n) => n.hostname)),
    ).toEqual(['m-1']);
    for (const query of ['groupBy=', 'groupBy=-rack', 'liveness=dead', 'cursor=abc', 'sort=hostname']) {
      const refused = await call(h, 'GET', `/v1/node-summary?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code, query).toBe('INVALID_INPUT');
    }
    expect((await call(h, 'GET', '/v1/node-summary', { token: 'nope' })).status).toBe(401);
  });
});
