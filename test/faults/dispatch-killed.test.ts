import { WorkflowNotFoundError } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { workflowOutbox } from '../../db/schema';
import { drainWorkflowId } from '../../workflows/definitions';
import { operationWhen, seedPoolNode } from '../support/builders';
import { allocate, call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { startWorkerProcess, workerExit } from '../support/worker-process';

// No in-process worker at first: a worker child process whose dispatcher dies at the point asked.
const h = useHarness({ worker: false });

async function startsWaiting(operationId: string): Promise<number> {
  return (await h.db.select().from(workflowOutbox).where(eq(workflowOutbox.operationId, operationId))).length;
}

async function runsOf(workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const run of h.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(run.status.name);
  return runs;
}

/** A drain recorded while no worker runs: its start waits in the outbox. */
async function recordedDrain(poolId: string) {
  const nodeId = await seedPoolNode(h, poolId);
  const allocationId = await allocate(h, nodeId, 'acme');
  const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'dispatch test' } });
  expect(reply.status).toBe(202);
  expect(reply.body.operation).toMatchObject({
    status: 'pending',
    progress: { phase: 'waiting-for-worker' },
  });
  return { nodeId, allocationId, operationId: reply.body.operation.id as string };
}

/** Drives the drain to its end with an in-process worker: exactly one run, one drain, once. */
async function drainsOnce(drain: { nodeId: string; allocationId: string; operationId: string }) {
  await operationWhen(h, drain.operationId, (op) => op.progress.phase === 'waiting', 30_000);
  expect((await call(h, 'POST', `/v1/allocations/${drain.allocationId}/release`)).status).toBe(200);
  expect(await h.temporal.workflow.getHandle(drainWorkflowId(drain.nodeId)).result()).toBe('drained');
  expect(await runsOf(drainWorkflowId(drain.nodeId))).toEqual(['COMPLETED']);
  expect((await eventsOf(h, drain.nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
  expect(await startsWaiting(drain.operationId)).toBe(0);
}

describe('the dispatcher killed between a request and its start', () => {
  it('killed before the start: the drain stays pending, and the next worker starts it, once', async () => {
    const drain = await recordedDrain('pool-before');
    const dying = startWorkerProcess(h, { env: { DRYDOCK_FAULT_KILL_IN_DISPATCH: 'before-start' } });
    expect(await workerExit(dying)).toBe('SIGKILL');
    // Nothing reached Temporal: no workflow, the operation still pending, its start still queued.
    await expect(h.temporal.workflow.getHandle(drainWorkflowId(drain.nodeId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    const op = (await call(h, 'GET', `/v1/operations/${drain.operationId}`)).body;
    expect(op).toMatchObject({ status: 'pending', progress: { phase: 'waiting-for-worker' } });
    expect(await startsWaiting(drain.operationId)).toBe(1);

    await h.startWorker();
    try {
      await drainsOnce(drain);
    } finally {
      await h.stopWorker();
    }
  }, 120_000);

  it('killed after the start, before its row went: the next worker finds the run, and starts nothing twice', async () => {
    const drain = await recordedDrain('pool-after');
    const dying = startWorkerProcess(h, { env: { DRYDOCK_FAULT_KILL_IN_DISPATCH: 'after-start' } });
    expect(await workerExit(dying)).toBe('SIGKILL');
    // Temporal has the run; the outbox still has the start the dead dispatcher claimed.
    expect((await h.temporal.workflow.getHandle(drainWorkflowId(drain.nodeId)).describe()).status.name).toBe(
      'RUNNING',
    );
    expect(await startsWaiting(drain.operationId)).toBe(1);

    await h.startWorker();
    try {
      await drainsOnce(drain);
    } finally {
      await h.stopWorker();
    }
  }, 120_000);
});
