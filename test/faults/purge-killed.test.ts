import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allocations } from '../../db/schema';
import { purgeWorkflowId } from '../../workflows/definitions';
import { answerCommand, joinedPoolNode, pollCommands, purge } from '../support/builders';
import { allocate, call } from '../support/fixtures';
import { useHarness, type Harness } from '../support/harness';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

type Purged = { nodeId: string; credential: string };

async function purgeJoinedNode(api: Harness): Promise<Purged> {
  return joinedPoolNode(api, api.taskQueue);
}

async function startPurge(api: Harness, nodeId: string, force?: boolean): Promise<void> {
  const reply = await purge(api, nodeId, { force });
  expect(reply.status).toBe(202);
}

/** The node acknowledges the signed purge command once the purge waits for it. */
const ackedFlow: Flow<Purged> = {
  setup: purgeJoinedNode,
  workflowId: ({ nodeId }) => purgeWorkflowId(nodeId),
  async drive(api, { nodeId, credential }, learned) {
    await startPurge(api, nodeId);
    await learned(1); // the first look: it began the purge and found the command unanswered
    const [command] = (await pollCommands(api, credential)).body.items;
    const ack = await answerCommand(api, credential, command.id);
    expect(ack.status).toBe(200);
  },
  outcome: (api, { nodeId }) => nodeOutcome(api, nodeId),
};

/** An operator deletes the purging node instead: the purge ends cancelled. */
const deletedFlow: Flow<Purged> = {
  ...ackedFlow,
  async drive(api, { nodeId }, learned) {
    await startPurge(api, nodeId);
    await learned(1);
    expect((await call(api, 'DELETE', `/v1/nodes/${nodeId}`, { body: { reason: 'gone' } })).status).toBe(200);
  },
};

/** A node holding two allocations, purged with force, then acknowledging. */
const forcedFlow: Flow<Purged> = {
  async setup(api) {
    const node = await purgeJoinedNode(api);
    await allocate(api, node.nodeId, 'acme');
    await allocate(api, node.nodeId, 'globex');
    return node;
  },
  workflowId: ackedFlow.workflowId,
  async drive(api, { nodeId, credential }, learned) {
    await startPurge(api, nodeId, true);
    await learned(1);
    const [command] = (await pollCommands(api, credential)).body.items;
    expect((await answerCommand(api, credential, command.id)).status).toBe(200);
  },
  async outcome(api, { nodeId }) {
    const held = await api.db
      .select({ releasedBy: allocations.releasedBy })
      .from(allocations)
      .where(eq(allocations.nodeId, nodeId));
    return { ...(await nodeOutcome(api, nodeId)), allocations: held };
  },
};

describe('purge with its worker killed at every step boundary', () => {
  it('an acknowledged purge forgets the node once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('purge', ackedFlow);
    expect(clean.steps).toEqual(['lookAtPurge', 'lookAtPurge']);
    expect(clean.result).toBe('purged');
    expect(clean.outcome).toMatchObject({
      events: { 'node.purge.requested': 1, 'node.purged': 1 },
      operations: [{ kind: 'purge', status: 'succeeded' }],
      commands: [{ kind: 'purge', status: 'acked' }],
      node: { provisionState: 'purging', deleted: true },
    });
  }, 240_000);

  it('a forced purge releases each allocation once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('purge-forced', forcedFlow);
    expect(clean.steps).toEqual(['lookAtPurge', 'lookAtPurge']);
    expect(clean.result).toBe('purged');
    expect(clean.outcome).toMatchObject({
      events: { 'allocation.force-released': 2, 'node.purge.requested': 1, 'node.purged': 1 },
      operations: [{ kind: 'purge', status: 'succeeded' }],
      allocations: [{ releasedBy: 'system:purge' }, { releasedBy: 'system:purge' }],
      node: { deleted: true },
    });
  }, 240_000);

  it('a purge ended by DELETE is cancelled once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('purge-deleted', deletedFlow);
    // The delete ended the purge in its own transaction; the woken look finds it so.
    expect(clean.steps).toEqual(['lookAtPurge', 'lookAtPurge']);
    expect(clean.result).toBe('cancelled');
    expect(clean.outcome).toMatchObject({
      events: { 'node.purge.requested': 1 },
      operations: [{ kind: 'purge', status: 'cancelled' }],
      node: { deleted: true },
    });
  }, 240_000);
});
