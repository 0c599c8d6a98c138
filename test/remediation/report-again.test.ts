import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { readNode } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf, remediateCommands } from '../support/remediation';

const h = useHarness();

const remediations = async (nodeId: string) =>
  (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items as {
    id: string;
    status: string;
  }[];

const result = (nodeId: string) => h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).result();

/** The agent's condition report, sent to an API whose Temporal is a port nothing listens on. */
async function reportWithoutTemporal(credential: string, body: Record<string, unknown>) {
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  try {
    const app = createApp({
      ...h.deps,
      temporal: new Client({ connection, namespace: 'default' }),
      beginTimeoutMs: 1_500,
    });
    const reply = await app.request('/v1/agent/conditions', {
      method: 'POST',
      headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: reply.status,
      body: (await reply.json()) as { error: { code: string; message: string } },
    };
  } finally {
    await connection.close();
  }
}

describe('a condition reported again', () => {
  it('while Temporal cannot be reached the report stands and is answered UNAVAILABLE; the next report starts the remediation, once', async () => {
    await seedPool(h, { id: 'pool-ra1', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-ra1');

    const refused = await reportWithoutTemporal(credential, {
      type: 'GpuXidError',
      status: true,
      reason: 'xid-79',
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({
      code: 'UNAVAILABLE',
      message:
        'the condition is recorded, but Temporal did not start its remediation: report it again to start it',
    });
    // The report is kept: the node is unschedulable for it, though nothing remediates it yet.
    expect(await readNode(h, nodeId)).toMatchObject({
      noScheduleReasons: ['condition:GpuXidError'],
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79' }],
    });
    expect(await remediations(nodeId)).toEqual([]);

    // The agent reports again (its report failed): the same report, now with Temporal up, starts it.
    const agent = agentOf(h, credential);
    const again = await agent.report('GpuXidError', true, 'xid-79');
    expect(again.status).toBe(200);
    expect(again.body.remediation).toMatchObject({ kind: 'remediation', status: 'running' });
    const [command] = await eventually(async () => {
      const items = await agent.commands();
      return items.length > 0 ? items : undefined;
    });
    expect(command).toMatchObject({ kind: 'remediate', action: 'reset-accelerator' });

    // Said once more (after a reconnect): the running remediation handles it; nothing new begins.
    const once = await agent.report('GpuXidError', true, 'xid-79');
    expect(once.status).toBe(200);
    expect((await remediations(nodeId)).map((o) => o.id)).toEqual([again.body.remediation.id]);
    expect(await remediateCommands(h, nodeId)).toHaveLength(1);

    await agent.report('GpuXidError', false);
    expect(await result(nodeId)).toBe('succeeded');
    expect((await eventsOf(h, nodeId, 'node.remediation.')).map((e) => e.type)).toEqual([
      'node.remediation.attempted',
      'node.remediation.succeeded',
    ]);
  });

  it('after its remediation escalated, with the condition still true, starts nothing', async () => {
    await seedPool(h, { id: 'pool-ra2', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-ra2');
    const agent = agentOf(h, credential);
    const reported = await agent.report('GpuXidError', true, 'xid-79');
    const operation = reported.body.remediation as { id: string };
    const refuse = async (action: string) => {
      const command = await eventually(async () => (await agent.commands()).find((c) => c.action === action));
      await agent.refuse(command.id, `${action} failed`);
    };
    await refuse('reset-accelerator');
    await refuse('reboot');
    expect(await result(nodeId)).toBe('escalated');
    const before = await eventsOf(h, nodeId);

    const again = await agent.report('GpuXidError', true, 'xid-79');
    expect(again.status).toBe(200);
    expect(again.body.remediation).toBeNull();
    expect((await remediations(nodeId)).map((o) => [o.id, o.status])).toEqual([[operation.id, 'failed']]);
    expect(await eventsOf(h, nodeId)).toEqual(before);
    expect(await readNode(h, nodeId)).toMatchObject({ maintenance: true });
  });
});
