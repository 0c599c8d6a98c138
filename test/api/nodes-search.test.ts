import { describe, expect, it } from 'vitest';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

const hostnames = async (query: string, token?: string) => {
  const reply = await call(h, 'GET', `/v1/nodes?${query}`, { token });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return (reply.body.items as { hostname: string }[]).map((n) => n.hostname).sort();
};

describe('GET /v1/nodes by hostname and label selector', () => {
  it('hostname finds the nodes whose hostname contains it, in any case; % and _ are plain characters', async () => {
    await seedPool(h, { id: 'pool-search', tenantId: 'acme' });
    await seedNode(h, { poolId: 'pool-search', hostname: 'gpu-b7-01' });
    await seedNode(h, { poolId: 'pool-search', hostname: 'GPU-B7-02' });
    await seedNode(h, { poolId: 'pool-search', hostname: 'cpu_b8-01' });
    expect(await hostnames('hostname=b7')).toEqual(['GPU-B7-02', 'gpu-b7-01']);
    expect(await hostnames('hostname=gpu-b7-01')).toEqual(['gpu-b7-01']);
    expect(await hostnames('hostname=_b8')).toEqual(['cpu_b8-01']);
    expect(await hostnames('hostname=u_b')).toEqual(['cpu_b8-01']);
    expect(await hostnames('hostname=pu-b')).toEqual(['GPU-B7-02', 'gpu-b7-01']);
    expect(await hostnames('hostname=nowhere')).toEqual([]);
  });

  it('selector keeps the nodes carrying every label, with the other filters and for tenants too', async () => {
    await seedPool(h, { id: 'pool-labels', tenantId: 'labels' });
    await seedPool(h, { id: 'pool-other', tenantId: 'other' });
    await seedNode(h, { poolId: 'pool-labels', hostname: 'l-1', labels: { rack: 'b7', model: 'h100' } });
    await seedNode(h, { poolId: 'pool-labels', hostname: 'l-2', labels: { rack: 'b7', model: 'a100' } });
    await seedNode(h, { poolId: 'pool-labels', hostname: 'l-3', labels: { rack: 'b8' } });
    await seedNode(h, { poolId: 'pool-other', hostname: 'o-1', labels: { rack: 'b7', model: 'h100' } });
    expect(await hostnames('poolId=pool-labels&selector=rack%3Db7')).toEqual(['l-1', 'l-2']);
    expect(await hostnames('selector=rack%3Db7,model%3Dh100')).toEqual(['l-1', 'o-1']);
    const key = await tenantKey(h, 'labels', ['compute:nodes:read']);
    expect(await hostnames('selector=model%3Dh100', key.secret)).toEqual(['l-1']);
  });

  it('refuses a malformed selector or hostname before reading anything', async () => {
    for (const query of ['selector=rack', 'selector=rack%3Db7,rack%3Db8', 'hostname=a%20b', 'hostname=']) {
      const reply = await call(h, 'GET', `/v1/nodes?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code, query).toBe('INVALID_INPUT');
    }
  });
});
