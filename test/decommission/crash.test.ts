import { and, eq, isNull, ne } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { accelerators, nodeCredentials, operations, schedulerEntries, storageRoots } from '../../db/schema';
import { decommissionWorkflowId } from '../../workflows/definitions';
import { executeFromPreview, retiredNode } from '../support/decommission';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { killWorker, startWorkerProcess } from '../support/worker-process';

// Workers run as child processes so that they can be killed for real between cleanup steps.
const h = useHarness({ worker: false });

describe('decommission survives killed workers', () => {
  it('a worker killed between every pair of cleanup steps still ends with exactly one event', async () => {
    await seedPool(h, { id: 'pool-k', tenantId: 'acme' });
    const { nodeId } = await retiredNode(h, 'pool-k');
    // Each cleanup step, seen in the database as soon as its transaction commits.
    const done = [
      async () =>
        (
          await h.db
            .select()
            .from(nodeCredentials)
            .where(and(eq(nodeCredentials.nodeId, nodeId), isNull(nodeCredentials.revokedAt)))
        ).length === 0,
      async () =>
        (
          await h.db
            .select()
            .from(accelerators)
            .where(and(eq(accelerators.nodeId, nodeId), ne(accelerators.state, 'decommissioned')))
        ).length === 0,
      async () =>
        (
          await h.db
            .select()
            .from(storageRoots)
            .where(and(eq(storageRoots.nodeId, nodeId), eq(storageRoots.state, 'writable')))
        ).length === 0,
      async () =>
        (await h.db.select().from(schedulerEntries).where(eq(schedulerEntries.nodeId, nodeId))).length === 0,
    ];

    let worker = startWorkerProcess(h);
    const { reply } = await executeFromPreview(h, nodeId, {}, 'crash-key-000001');
    expect(reply.status).toBe(202);
    try {
      for (const [step, isDone] of done.entries()) {
        await eventually(isDone, 60_000, 5);
        await killWorker(worker);
        // Killed right after step `step + 1` committed: nothing past it has run yet.
        expect(await eventsOf(h, nodeId, 'node.decommissioned'), `after step ${step + 1}`).toEqual([]);
        worker = startWorkerProcess(h);
      }
      expect(await h.temporal.workflow.getHandle(decommissionWorkflowId(nodeId)).result()).toBe(
        'decommissioned',
      );
    } finally {
      await killWorker(worker);
    }
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toHaveLength(1);
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(ops.filter((o) => o.kind === 'decommission').map((o) => o.status)).toEqual(['succeeded']);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body.provisionState).toBe('decommissioned');
  }, 240_000);
});
