import { afterEach, describe, expect, it } from 'vitest';
import { drainWorkflowId, progressQuery } from '../../workflows/definitions';
import { allocate, call, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness();

/** What the Web UI's "Stack Trace" tab and `temporal workflow stack` ask a running workflow. */
const STACK_TRACE_QUERY = '__stack_trace';

async function waitingDrain(hostname: string): Promise<string> {
  const nodeId = await seedNode(h, { poolId: 'pool-s', tenantId: 'acme', hostname });
  await allocate(h, nodeId, 'acme');
  expect((await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'stack' } })).status).toBe(
    202,
  );
  await eventually(async () => {
    const progress = await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).query(progressQuery);
    return progress.phase === 'waiting';
  });
  return nodeId;
}

describe("workflow stack traces (the patched SDK's promise hook)", () => {
  afterEach(() => {
    delete process.env.DRYDOCK_WORKFLOW_STACK_TRACES;
  });

  it('are off by default, and the query says so; DRYDOCK_WORKFLOW_STACK_TRACES=on turns them on', async () => {
    await seedPool(h, { id: 'pool-s', tenantId: 'acme' });
    const nodeId = await waitingDrain('gpu-s-01');
    const handle = h.temporal.workflow.getHandle(drainWorkflowId(nodeId));
    await expect(handle.query(STACK_TRACE_QUERY)).rejects.toThrow(
      /Workflow stack traces are not enabled on this worker/,
    );

    // A worker's workflow thread reads the setting when it starts: a new worker, with it on,
    // replays the drain and answers with where it waits.
    await h.stopWorker();
    process.env.DRYDOCK_WORKFLOW_STACK_TRACES = 'on';
    await h.startWorker();
    const stack = await handle.query<string>(STACK_TRACE_QUERY);
    expect(stack).toMatch(/workflows\/drain\.ts/);
    // The drain itself went on waiting: the query changed nothing.
    const progress = await handle.query(progressQuery);
    expect(progress).toMatchObject({ phase: 'waiting', liveAllocationCount: 1 });
  });
});
