import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { call, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf, remediateCommands } from '../support/remediation';
import { recordHistory } from '../support/histories';
import { completedSteps } from '../support/step-faults';
import { startWorkerProcess, workerExit } from '../support/worker-process';

// No in-process worker at first: a worker child process dies right after the remediation's last step.
const h = useHarness({ worker: false });

describe('a begin that reaches a remediation as it ends', () => {
  it('records an operation the next run takes up: the condition is remediated, not left behind', async () => {
    await seedPool(h, { id: 'pool-late', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-late');
    const agent = agentOf(h, credential);
    const workflowId = remediationWorkflowId(nodeId);
    // Steps: the begin, the first rung, a check that finds it unanswered; then a check that sees the
    // condition cleared and the success — after which the worker dies, before the workflow ends.
    const child = startWorkerProcess(h, { killAfterStep: { steps: 5, workflowId } });
    expect((await agent.report('GpuXidError', true)).status).toBe(200);
    await eventually(async () => (await completedSteps(h, workflowId)).length >= 3, 60_000, 100);
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

    // The report of another condition reaches the run that has succeeded but not yet ended.
    const reported = agent.report('NicFlap', true, 'link down');
    await h.startWorker();
    expect((await reported).status).toBe(200);
    const command = await eventually(
      async () =>
        (await remediateCommands(h, nodeId)).find(
          (c) => (c.data as { condition?: string } | null)?.condition === 'NicFlap',
        ),
      60_000,
    );
    const [, next] = await operations();
    expect(next).toMatchObject({ status: 'running', result: { condition: 'NicFlap' } });
    expect(command.operationId).toBe(next!.id);
    // The run that recorded it continued as new, and that run took the operation up.
    const runs: string[] = [];
    for await (const run of h.temporal.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      runs.push(run.status.name);
    expect(runs.sort()).toEqual(['CONTINUED_AS_NEW', 'RUNNING']);
    await agent.report('NicFlap', false);
    expect(await h.temporal.workflow.getHandle(workflowId).result()).toBe('succeeded');
    await recordHistory(h.temporal, workflowId, 'remediation-late-begin', ending.runId);
    expect((await operations()).map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
  }, 120_000);
});
