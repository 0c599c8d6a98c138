import { describe, expect, it } from 'vitest';
import { drainWorkflowId } from '../../workflows/definitions';
import { seedPoolNode } from '../support/builders';
import { allocate, call } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

/** A drain of a node with one allocation, released once the drain has seen it. */
const drainFlow: Flow<{ nodeId: string; allocationId: string }> = {
  async setup(api) {
    const nodeId = await seedPoolNode(api, api.taskQueue);
    return { nodeId, allocationId: await allocate(api, nodeId, 'acme') };
  },
  workflowId: ({ nodeId }) => drainWorkflowId(nodeId),
  async drive(api, { nodeId, allocationId }, learned) {
    const reply = await call(api, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'fault test' } });
    expect(reply.status).toBe(202);
    await learned(1); // the first look: it began the drain and found the allocation
    expect((await call(api, 'POST', `/v1/allocations/${allocationId}/release`)).status).toBe(200);
  },
  outcome: (api, { nodeId }) => nodeOutcome(api, nodeId),
};

describe('drain with its worker killed at every step boundary', () => {
  it('ends drained once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('drain', drainFlow);
    expect(clean.steps).toEqual(['lookAtDrain', 'lookAtDrain']);
    expect(clean.result).toBe('drained');
    expect(clean.outcome).toMatchObject({
      events: { 'node.draining': 1, 'node.drained': 1 },
      operations: [{ kind: 'drain', status: 'succeeded' }],
      node: { cordoned: true, deleted: false },
    });
  }, 240_000);
});
