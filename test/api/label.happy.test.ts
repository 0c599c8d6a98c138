import { describe, expect, it } from 'vitest';
import { nodeLabels } from '../../db/schema';
import { seedPoolNode } from '../support/builders';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('label: happy paths', () => {
  it('sets and removes operator labels and returns the node with its labels', async () => {
    const id = await seedPoolNode(h, 'pool-l');
    await h.db
      .insert(nodeLabels)
      .values({ nodeId: id, key: 'gpu.model', value: 'H100', source: 'inventory' });
    const set = await call(h, 'POST', `/v1/nodes/${id}/label`, {
      body: {
        set: { rack: 'b7', 'fabric/rail': '3', note: 'ops@example.com:+1=2', empty: '' },
        reason: 'rack move',
      },
    });
    expect(set.status).toBe(200);
    expect(set.body.version).toBe(2);
    expect(set.body.labels).toEqual([
      { key: 'empty', value: '', source: 'operator' },
      { key: 'fabric/rail', value: '3', source: 'operator' },
      { key: 'gpu.model', value: 'H100', source: 'inventory' },
      { key: 'note', value: 'ops@example.com:+1=2', source: 'operator' },
      { key: 'rack', value: 'b7', source: 'operator' },
    ]);
    const changed = await call(h, 'POST', `/v1/nodes/${id}/label`, {
      body: { set: { rack: 'b8' }, remove: ['note', 'empty'] },
    });
    expect(changed.body.labels.map((l: { key: string; value: string }) => `${l.key}=${l.value}`)).toEqual([
      'fabric/rail=3',
      'gpu.model=H100',
      'rack=b8',
    ]);
    const events = await eventsOf(h, id);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      [
        'node.labeled',
        { set: { rack: 'b7', 'fabric/rail': '3', note: 'ops@example.com:+1=2', empty: '' }, removed: [] },
      ],
      ['node.labeled', { set: { rack: 'b8' }, removed: ['note', 'empty'] }],
    ]);
    expect(events[0]?.reason).toBe('rack move');
  });

  it('changes nothing for equal values and keys that are not operator labels', async () => {
    await seedPool(h, { id: 'pool-l', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-l', tenantId: 'acme', labels: { rack: 'b7' } });
    await h.db.insert(nodeLabels).values({ nodeId: id, key: 'gpu.count', value: '8', source: 'inventory' });
    const same = await call(h, 'POST', `/v1/nodes/${id}/label`, {
      body: { set: { rack: 'b7' }, remove: ['gpu.count', 'absent'] },
    });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(1);
    expect(same.body.labels).toHaveLength(2);
    expect(await eventsOf(h, id)).toEqual([]);
  });

  it('filters nodes by label-bearing pools and keeps labels in the list view', async () => {
    await seedPool(h, { id: 'pool-m', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-m', tenantId: 'acme', labels: { rack: 'c1' } });
    const list = await call(h, 'GET', '/v1/nodes?poolId=pool-m');
    expect(list.body.items).toMatchObject([
      { id, labels: [{ key: 'rack', value: 'c1', source: 'operator' }] },
    ]);
  });
});
