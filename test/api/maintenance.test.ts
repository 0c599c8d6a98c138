import { describe, expect, it } from 'vitest';
import { placeAllocation, readNode, seedPoolNode, setNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { expectNodeRouteSecured } from '../support/security';

const h = useHarness({ worker: false });

describe('maintenance', () => {
  it('happy: an operator clears maintenance (one event); clearing again changes nothing', async () => {
    const id = await seedPoolNode(h, 'pool-m');
    await setNode(h, id, { maintenance: true });
    const refused = await placeAllocation(h, id);
    expect(refused.body.error.details.reasons).toEqual(['maintenance']);

    const cleared = await call(h, 'POST', `/v1/nodes/${id}/maintenance`, {
      body: { maintenance: false, reason: 'PSU swapped' },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ maintenance: false, version: 2 });
    const again = await call(h, 'POST', `/v1/nodes/${id}/maintenance`, { body: { maintenance: false } });
    expect(again.body.version).toBe(2);
    expect(await eventsOf(h, id)).toMatchObject([
      { type: 'node.maintenance.cleared', reason: 'PSU swapped' },
    ]);
    expect((await placeAllocation(h, id)).status).toBe(201);
  });

  it('error: only { maintenance: false } is accepted, and a stale version conflicts', async () => {
    const id = await seedPoolNode(h, 'pool-m');
    await setNode(h, id, { maintenance: true, version: 4 });
    for (const body of [
      {},
      { maintenance: true },
      { maintenance: 'false' },
      { maintenance: false, extra: 1 },
    ]) {
      const reply = await call(h, 'POST', `/v1/nodes/${id}/maintenance`, { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
    }
    const stale = await call(h, 'POST', `/v1/nodes/${id}/maintenance`, {
      body: { maintenance: false, version: 3 },
    });
    expect(stale.status).toBe(409);
    expect(await readNode(h, id)).toMatchObject({ maintenance: true, version: 4 });
    expect(await eventsOf(h, id)).toEqual([]);
  });

  it('security: needs compute:nodes:update on a visible node', async () => {
    await expectNodeRouteSecured(h, {
      method: 'POST',
      path: (id) => `/v1/nodes/${id}/maintenance`,
      body: { maintenance: false },
      action: 'compute:nodes:update',
    });
  });
});
