import { describe, expect, it } from 'vitest';
import { drainProgress } from './support/builders';
import { allocate, call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();
const NODES = 12;
/** How much later each node's release goes than the one before, after its drain request. */
const RELEASE_STEP_MS = 40;

describe('a release racing the drain of its node', () => {
  it('each drain finishes at once, whichever commits first: no wake-up is lost, nothing happens twice', async () => {
    await seedPool(h, { id: 'pool-rr', tenantId: 'acme' });
    const racers = await Promise.all(
      Array.from({ length: NODES }, async (_, i) => {
        const nodeId = await seedNode(h, { poolId: 'pool-rr', tenantId: 'acme', hostname: `gpu-rr-${i}` });
        return { nodeId, allocationId: await allocate(h, nodeId, 'acme') };
      }),
    );

    // Each release goes a little later than the one before, from with its node's drain request to
    // well after it: some commit before the drain's fence (its first look finds the node empty),
    // some while the drain begins or looks. Every other node's release waits until its drain says
    // it waits: that one sees `draining` and must wake it by signal. A release whose wake-up was
    // lost would leave its drain asleep until the periodic look, 5 minutes away — far past the
    // wait below.
    const replies = await Promise.all(
      racers.map(async ({ nodeId, allocationId }, i) => {
        const drain = call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'race' } });
        if (i % 2 === 0) await new Promise((r) => setTimeout(r, (i / 2) * RELEASE_STEP_MS));
        else {
          await drain;
          await eventually(async () => (await drainProgress(h, nodeId))?.phase === 'waiting');
        }
        const released = await call(h, 'POST', `/v1/allocations/${allocationId}/release`);
        return { drained: await drain, released };
      }),
    );
    for (const { drained, released } of replies) {
      expect([200, 202]).toContain(drained.status);
      expect(released.status).toBe(200);
    }

    for (const { nodeId } of racers) {
      await eventually(async () => (await eventsOf(h, nodeId, 'node.drained')).length > 0, 30_000, 50);
    }
    for (const { nodeId } of racers) {
      expect(await eventsOf(h, nodeId, 'node.draining')).toHaveLength(1);
      expect(await eventsOf(h, nodeId, 'node.drained')).toHaveLength(1);
      const node = await call(h, 'GET', `/v1/nodes/${nodeId}`);
      expect(node.body).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    }
  });
});
