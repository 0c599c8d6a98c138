import { asc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allocations, disruptions, events } from '../../db/schema';
import { drainWorkflowId } from '../../workflows/definitions';
import { seedPoolNode } from '../support/builders';
import { allocate, call } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

/** A drain past its deadline at once, of a node with two allocations: it releases them by force. */
const forcedFlow: Flow<{ nodeId: string; allocationIds: string[] }> = {
  async setup(api) {
    const nodeId = await seedPoolNode(api, api.taskQueue);
    const allocationIds = [await allocate(api, nodeId, 'acme'), await allocate(api, nodeId, 'acme')];
    return { nodeId, allocationIds };
  },
  workflowId: ({ nodeId }) => drainWorkflowId(nodeId),
  async drive(api, { nodeId }) {
    const reply = await call(api, 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'fault test', deadline: '0s' },
    });
    expect(reply.status).toBe(202);
  },
  async outcome(api, { nodeId, allocationIds }) {
    const released = await api.db
      .select({ id: allocations.id, releasedBy: allocations.releasedBy })
      .from(allocations)
      .where(eq(allocations.nodeId, nodeId))
      .orderBy(asc(allocations.id));
    const forced = await api.db.select().from(events).where(eq(events.type, 'allocation.force-released'));
    const [slot] = await api.db.select().from(disruptions).where(eq(disruptions.nodeId, nodeId));
    return {
      ...(await nodeOutcome(api, nodeId)),
      // Each allocation released once, by the drain, with one event of its own.
      allocations: released.map((a) => ({
        releasedBy: a.releasedBy,
        events: forced.filter((e) => (e.data as { allocationId: string }).allocationId === a.id).length,
      })),
      everyAllocation:
        released
          .map((a) => a.id)
          .sort()
          .join() === [...allocationIds].sort().join(),
      budget: slot?.state ?? null,
    };
  },
};

describe('forced release with its worker killed at every step boundary', () => {
  it('releases each allocation once and keeps the slot, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('forced', forcedFlow);
    // One look: past the deadline at once, it releases both and finds the node drained.
    expect(clean.steps).toEqual(['lookAtDrain']);
    expect(clean.result).toBe('drained');
    expect(clean.outcome).toMatchObject({
      events: { 'node.draining': 1, 'allocation.force-released': 2, 'node.drained': 1 },
      operations: [{ kind: 'drain', status: 'succeeded' }],
      node: { cordoned: true, deleted: false },
      allocations: [
        { releasedBy: 'system:drain', events: 1 },
        { releasedBy: 'system:drain', events: 1 },
      ],
      everyAllocation: true,
      budget: 'holding',
    });
  }, 240_000);
});
