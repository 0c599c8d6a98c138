import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { agentOf, remediateCommands, remediationsOf, remediationWhen } from '../support/remediation';

const h = useHarness();

describe('a remediation of a node that is deleted', () => {
  it('ends with the delete: its workflow closes at once, not at the end of its attempt', async () => {
    // The default attempt lasts 10 minutes: a workflow that waited for it would outlive the test.
    await seedPool(h, { id: 'pool-rdel', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-rdel');
    const agent = agentOf(h, credential);
    const reported = await agent.report('GpuXidError', true, 'xid-79');
    const opId = reported.body.remediation.id as string;
    await remediationWhen(h, opId);
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: {} })).status).toBe(200);

    const deleted = await call(h, 'DELETE', `/v1/nodes/${nodeId}`, { body: { reason: 'rebuilt' } });
    expect(deleted.body).toEqual({ nodeId, deleted: true });
    const [op] = await remediationsOf(h, nodeId);
    expect(op).toMatchObject({ id: opId, status: 'cancelled' });
    // The workflow ends now; the command it sent is withdrawn with the node.
    const handle = h.temporal.workflow.getHandle(remediationWorkflowId(nodeId));
    expect(await handle.result()).toBe('cancelled');
    expect((await remediateCommands(h, nodeId)).map((c) => c.status)).toEqual(['cancelled']);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toContain('node.deleted');
  }, 30_000);
});
