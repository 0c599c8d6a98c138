import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { allocate, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

// No worker runs for this file: nobody takes the workflow's `begin`.
const h = useHarness({ worker: false });

describe('no worker takes the begin', () => {
  it('answers UNAVAILABLE within the deadline, and nothing changed', async () => {
    await seedPool(h, { id: 'pool-u', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-u', tenantId: 'acme' });
    await allocate(h, nodeId, 'acme');
    const app = createApp({ ...h.deps, beginTimeoutMs: 1_500 });
    const started = Date.now();
    const response = await app.request(`/v1/nodes/${nodeId}/drain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.operatorKey}` },
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as any).error.code).toBe('UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(5_000);
    const node = await (
      await app.request(`/v1/nodes/${nodeId}`, { headers: { authorization: `Bearer ${h.operatorKey}` } })
    ).json();
    expect(node).toMatchObject({ cordoned: false, noScheduleReasons: [], version: 1 });
    expect(await eventsOf(h, nodeId)).toEqual([]);
  });
});
