import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { operations } from '../../db/schema';
import { poolDrainWorkflowId } from '../../workflows/definitions';
import { seedPoolNode } from '../support/builders';
import { call } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

/** A pool drain of three empty nodes, two at a time. */
const poolDrainFlow: Flow<{ poolId: string; nodeIds: string[] }> = {
  async setup(api) {
    const poolId = api.taskQueue;
    const nodeIds = [];
    for (let i = 0; i < 3; i++) nodeIds.push(await seedPoolNode(api, poolId));
    return { poolId, nodeIds };
  },
  workflowId: ({ poolId }) => poolDrainWorkflowId(poolId),
  async drive(api, { poolId }) {
    const reply = await call(api, 'POST', `/v1/pools/${poolId}/drain`, {
      body: { maxConcurrent: 2, reason: 'fault test' },
    });
    expect(reply.status).toBe(202);
  },
  async outcome(api, { poolId, nodeIds }) {
    const [op] = await api.db
      .select({ status: operations.status, result: operations.result })
      .from(operations)
      .where(and(eq(operations.poolId, poolId), eq(operations.kind, 'pool-drain')));
    const nodes = await Promise.all(nodeIds.map((nodeId) => nodeOutcome(api, nodeId)));
    return { status: op?.status, counts: op?.result?.counts, failed: op?.result?.failed, nodes };
  },
};

describe('pool drain with its worker killed at every step boundary', () => {
  it('drains every node once and succeeds, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('pool-drain', poolDrainFlow);
    // It looks, requests the first two node drains, and looks until its last look ends it.
    expect(clean.steps.slice(0, 2)).toEqual(['lookAtPoolDrain', 'requestNodeDrains']);
    expect(clean.steps.at(-1)).toBe('lookAtPoolDrain');
    expect(clean.result).toBe('succeeded');
    expect(clean.outcome).toMatchObject({
      status: 'succeeded',
      counts: { drained: 3, failed: 0, pending: 0, draining: 0 },
      failed: [],
    });
    for (const node of (clean.outcome as { nodes: unknown[] }).nodes) {
      expect(node).toMatchObject({
        events: { 'node.draining': 1, 'node.drained': 1 },
        operations: [{ kind: 'drain', status: 'succeeded' }],
        node: { cordoned: true },
      });
    }
  }, 240_000);
});
