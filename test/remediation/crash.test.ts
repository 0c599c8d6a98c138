import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf, remediateCommands } from '../support/remediation';
import { killWorker, startWorkerProcess } from '../support/worker-process';

const h = useHarness({ worker: false });

describe('remediation survives a killed worker', () => {
  it('a worker killed mid-attempt: the condition clears meanwhile, the next worker succeeds once', async () => {
    await seedPool(h, { id: 'pool-k', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-k');
    const agent = agentOf(h, credential);
    let worker = startWorkerProcess(h);
    try {
      await agent.report('GpuXidError', true);
      await eventually(async () => (await remediateCommands(h, nodeId)).length === 1, 30_000);
      await killWorker(worker);
      const [command] = await agent.commands();
      await agent.ack(command!.id);
      await agent.report('GpuXidError', false);
      worker = startWorkerProcess(h);
      expect(await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).result()).toBe('succeeded');
    } finally {
      await killWorker(worker);
    }
    expect((await eventsOf(h, nodeId, 'node.remediation.')).map((e) => e.type)).toEqual([
      'node.remediation.attempted',
      'node.remediation.succeeded',
    ]);
    expect(await remediateCommands(h, nodeId)).toHaveLength(1);
  }, 120_000);
});
