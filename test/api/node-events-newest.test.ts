import { describe, expect, it } from 'vitest';
import { call, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('GET /v1/nodes/{id}/events?order=newest', () => {
  it('pages newest first, each cursor going further back, with the type filter', async () => {
    await seedPool(h, { id: 'pool-newest' });
    const nodeId = await seedNode(h, { poolId: 'pool-newest' });
    for (let i = 0; i < 3; i++) {
      expect(
        (await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { reason: `c${i}` } })).status,
      ).toBe(200);
      expect((await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`, { body: {} })).status).toBe(200);
    }
    const oldest = await call(h, 'GET', `/v1/nodes/${nodeId}/events?type=node.cordoned`);
    const ids = (oldest.body.items as { id: string }[]).map((e) => e.id);
    expect(ids).toHaveLength(3);

    const first = await call(h, 'GET', `/v1/nodes/${nodeId}/events?type=node.cordoned&order=newest&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.items.map((e: { reason: string }) => e.reason)).toEqual(['c2', 'c1']);
    const rest = await call(
      h,
      'GET',
      `/v1/nodes/${nodeId}/events?type=node.cordoned&order=newest&limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(rest.body.items.map((e: { reason: string }) => e.reason)).toEqual(['c0']);
    expect(rest.body.nextCursor).toBeNull();
    expect([...first.body.items, ...rest.body.items].map((e: { id: string }) => e.id)).toEqual(
      [...ids].reverse(),
    );
    // Unknown orders are refused.
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}/events?order=random`)).status).toBe(400);
  });
});
