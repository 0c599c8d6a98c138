import { and, eq, isNull } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { accelerators, nodeCredentials, schedulerEntries, storageRoots } from '../../db/schema';
import { decommissionWorkflowId } from '../../workflows/definitions';
import { execute, executeBody, preview, retiredNode } from '../support/decommission';
import { seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

/** A retired node decommissioned with what its preview showed. */
const decommissionFlow: Flow<{ nodeId: string; body: Record<string, unknown> }> = {
  async setup(api) {
    await seedPool(api, { id: api.taskQueue, tenantId: 'acme' });
    const { nodeId } = await retiredNode(api, api.taskQueue);
    return { nodeId, body: executeBody((await preview(api, nodeId)).body) };
  },
  workflowId: ({ nodeId }) => decommissionWorkflowId(nodeId),
  async drive(api, { nodeId, body }) {
    const reply = await execute(api, nodeId, body, `decommission-${nodeId}`);
    expect(reply.status).toBe(202);
  },
  async outcome(api, { nodeId }) {
    const live = await api.db
      .select({ id: nodeCredentials.id })
      .from(nodeCredentials)
      .where(and(eq(nodeCredentials.nodeId, nodeId), isNull(nodeCredentials.revokedAt)));
    const gpus = await api.db
      .select({ state: accelerators.state })
      .from(accelerators)
      .where(eq(accelerators.nodeId, nodeId));
    const roots = await api.db
      .select({ state: storageRoots.state })
      .from(storageRoots)
      .where(eq(storageRoots.nodeId, nodeId));
    const scheduler = await api.db.select().from(schedulerEntries).where(eq(schedulerEntries.nodeId, nodeId));
    return {
      ...(await nodeOutcome(api, nodeId)),
      liveCredentials: live.length,
      accelerators: gpus.map((g) => g.state),
      storageRoots: roots.map((r) => r.state),
      schedulerEntries: scheduler.length,
    };
  },
};

describe('decommission with its worker killed at every step boundary', () => {
  it('ends decommissioned once, every cleanup done, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('decommission', decommissionFlow);
    expect(clean.steps).toEqual([
      'beginDecommission',
      'revokeNodeIdentity',
      'decommissionAccelerators',
      'protectStorageRoots',
      'removeCurrentRows',
      'finalizeDecommission',
    ]);
    expect(clean.result).toBe('decommissioned');
    expect(clean.outcome).toMatchObject({
      events: { 'node.decommissioned': 1 },
      operations: [{ kind: 'decommission', status: 'succeeded' }],
      node: { provisionState: 'decommissioned', liveness: 'decommissioned', access: 'blocked' },
      liveCredentials: 0,
      accelerators: ['decommissioned', 'decommissioned'],
      storageRoots: ['read_only'],
      schedulerEntries: 0,
    });
  }, 300_000);
});
