import { describe, expect, it } from 'vitest';
import { drainProgress, operationWhen } from './support/builders';
import { allocate, call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();

/** Records Slurm job `jobId` running on `nodeId`, as a Slurm bridge does. */
async function observed(nodeId: string, jobId: string): Promise<string> {
  const reply = await call(h, 'POST', '/v1/allocations', {
    body: { nodeId, tenantId: 'acme', kind: 'job', source: 'slurm:hpc1', externalId: jobId },
  });
  expect(reply.status).toBe(201);
  return reply.body.id as string;
}

const allocation = async (id: string) => (await call(h, 'GET', `/v1/allocations/${id}`)).body;

describe('a drain past its deadline on a node running observed work', () => {
  it('releases what Drydock placed, asks the scheduler to end the rest once, and drains when the bridge releases it', async () => {
    await seedPool(h, { id: 'pool-obs-drain', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-obs-drain' });
    const placed = await allocate(h, nodeId, 'acme');
    const job = await observed(nodeId, '4711');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'driver roll-out', deadline: '0s' },
    });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id as string;

    // The deadline passed at once: the placed allocation goes, the job's end is asked of Slurm.
    const [asked] = await eventually(async () => {
      const events = await eventsOf(h, nodeId, 'allocation.end-requested');
      return events.length > 0 ? events : undefined;
    });
    expect(asked).toMatchObject({
      actor: 'system:drain',
      operationId: opId,
      data: {
        allocationId: job,
        tenantId: 'acme',
        source: 'slurm:hpc1',
        externalId: '4711',
        operationId: opId,
      },
    });
    expect(await allocation(placed)).toMatchObject({ live: false, releasedBy: 'system:drain' });
    expect(await allocation(job)).toMatchObject({
      live: true,
      releasedAt: null,
      endRequestedAt: expect.any(String),
    });
    // Still draining, waiting for the job: not drained while it runs.
    const waiting = await drainProgress(h, nodeId);
    expect(waiting).toMatchObject({ phase: 'waiting', waitingFor: { allocations: 1, items: [{ id: job }] } });
    // The passed deadline is no reason to look again soon: the bridge's release wakes the drain.
    expect(Date.parse(waiting!.nextCheckAt!) - Date.now()).toBeGreaterThan(60_000);
    expect(await eventsOf(h, nodeId, 'node.drained')).toEqual([]);
    expect((await eventsOf(h, nodeId, 'allocation.force-released')).map((e) => e.data.allocationId)).toEqual([
      placed,
    ]);

    // The bridge sees the job gone from Slurm and releases it: the drain ends at once.
    expect((await call(h, 'POST', `/v1/allocations/${job}/release`)).status).toBe(200);
    const drained = await operationWhen(h, opId, (op) => op.status === 'succeeded');
    expect(drained.progress.phase).toBe('drained');
    // Asked once, however many looks the drain took.
    expect(await eventsOf(h, nodeId, 'allocation.end-requested')).toHaveLength(1);
  });
});
