import { describe, expect, it } from 'vitest';
import { readNode, seedPoolNode } from './support/builders';
import { call, eventsOf } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });

describe('optimistic concurrency under a race', () => {
  it('50 concurrent cordons carrying the same version: exactly one wins', async () => {
    const id = await seedPoolNode(h, 'pool-r');
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(h, 'POST', `/v1/nodes/${id}/cordon`, { body: { version: 1, reason: `racer ${i}` } }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    for (const loser of replies.filter((r) => r.status === 409)) {
      expect(loser.body.error).toMatchObject({ code: 'CONFLICT', details: { currentVersion: 2 } });
    }
    expect(await readNode(h, id)).toMatchObject({ cordoned: true, version: 2 });
    expect(await eventsOf(h, id)).toHaveLength(1);
  });

  it('50 concurrent label calls without a version all land, one version each', async () => {
    const id = await seedPoolNode(h, 'pool-r');
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(h, 'POST', `/v1/nodes/${id}/label`, { body: { set: { [`k${i}`]: 'v' } } }),
      ),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => r.body.version)).size).toBe(50);
    const node = await readNode(h, id);
    expect(node).toMatchObject({ version: 51 });
    expect(node.labels).toHaveLength(50);
    expect(await eventsOf(h, id)).toHaveLength(50);
  });
});
