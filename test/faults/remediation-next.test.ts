import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { call, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf, remediateCommands } from '../support/remediation';
import { completedSteps } from '../support/step-faults';
import { startWorkerProcess, workerExit } from '../support/worker-process';

// No in-process worker at first: a worker child process dies right after the remediation's last step.
const h = useHarness({ worker: false });

describe('a remediation requested while the previous run of its workflow id is still closing', () => {
  it('starts once that run ended, and is remediated: nothing left behind, nothing started twice', async () => {
    await seedPool(h, { id: 'pool-next', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-next');
    const agent = agentOf(h, credential);
    const workflowId = remediationWorkflowId(nodeId);
    // Steps: the begin, the first rung, a check that finds it unanswered; then a check that sees the
    // condition cleared and the success — after which the worker dies, before the workflow ends.
    const child = startWorkerProcess(h, { killAfterStep: { steps: 5, workflowId } });
    expect((await agent.report('GpuXidError', true)).status).toBe(200);
    await eventually(
      async () => (await completedSteps(h, workflowId).catch(() => [])).length >= 3,
      60_000,
      100,
    );
    await agent.report('GpuXidError', false);
    expect(await workerExit(child)).toBe('SIGKILL');
    const operations = async () =>
      (
        (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items as {
          id: string;
          status: string;
          result: { condition?: string };
        }[]
      ).sort((a, b) => (a.id < b.id ? -1 : 1));
    const [first] = await operations();
    expect(first).toMatchObject({ status: 'succeeded' });
    const ending = await h.temporal.workflow.getHandle(workflowId).describe();
    expect(ending.status.name).toBe('RUNNING');

    // Another condition: its remediation is recorded at once (the first one's record has ended),
    // and its start waits in the outbox while the first one's run, with no worker, is still open.
    expect((await agent.report('NicFlap', true, 'link down')).status).toBe(200);
    const [, next] = await operations();
    expect(next).toMatchObject({ status: 'pending', result: { condition: 'NicFlap' } });

    // A worker comes back: it ends the first run, then the dispatcher's start of the second takes.
    await h.startWorker();
    const command = await eventually(
      async () =>
        (await remediateCommands(h, nodeId)).find(
          (c) => (c.data as { condition?: string } | null)?.condition === 'NicFlap',
        ),
      60_000,
    );
    expect(command.operationId).toBe(next!.id);
    const runs: string[] = [];
    for await (const run of h.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runs.push(run.status.name);
    expect(runs.sort()).toEqual(['COMPLETED', 'RUNNING']);
    await agent.report('NicFlap', false);
    expect(await h.temporal.workflow.getHandle(workflowId).result()).toBe('succeeded');
    expect((await operations()).map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
  }, 120_000);
});
