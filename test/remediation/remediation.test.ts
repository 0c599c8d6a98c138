import { describe, expect, it } from 'vitest';
import {
  remediationProgressQuery,
  remediationWakeSignal,
  remediationWorkflowId,
} from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { placeAllocation, readNode } from '../support/builders';
import { call, eventsOf, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import { agentOf, remediateCommands } from '../support/remediation';
import { signalAndAwaitStep } from '../support/witnesses';

const h = useHarness();

/** A pool of acme's whose remediations of NicFlap climb reset-nic then reboot, 1.5 s per attempt. */
const poolOf = (id: string) =>
  seedPool(h, {
    id,
    tenantId: 'acme',
    kind: 'provider',
    policy: {
      maxUnhealthy: 5,
      remediation: { NicFlap: { ladder: ['reset-nic', 'reboot'], attemptTimeout: '1500ms' } },
    },
  });

const result = (nodeId: string) => h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).result();
const node = (id: string) => readNode(h, id);

describe('remediation', () => {
  it('a reported fault gets the first rung; clearing it succeeds', async () => {
    await poolOf('pool-r1');
    const { nodeId, credential } = await joinedNode(h, 'pool-r1');
    const agent = agentOf(h, credential);
    const reported = await agent.report('GpuXidError', true, 'xid-79');
    expect(reported.status).toBe(200);
    expect(reported.body.remediation).toMatchObject({ kind: 'remediation', status: 'running' });
    expect(await node(nodeId)).toMatchObject({
      noScheduleReasons: ['condition:GpuXidError'],
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79' }],
    });
    const [command] = await eventually(async () => {
      const items = await agent.commands();
      return items.length > 0 ? items : undefined;
    });
    expect(command).toMatchObject({ kind: 'remediate', action: 'reset-accelerator' });
    const progress = await h.temporal.workflow
      .getHandle(remediationWorkflowId(nodeId))
      .query(remediationProgressQuery);
    expect(progress).toMatchObject({
      phase: 'attempting',
      attempt: 1,
      action: 'reset-accelerator',
      attemptDeadline: expect.any(String),
    });
    // An ack means the action ran; the attempt still waits for the condition to clear.
    await agent.ack(command!.id);
    // Woken, the attempt looks at the acked command and the condition again, and goes on waiting.
    await signalAndAwaitStep(h.temporal, remediationWorkflowId(nodeId), remediationWakeSignal.name);
    expect((await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).describe()).status.name).toBe(
      'RUNNING',
    );
    expect(
      await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).query(remediationProgressQuery),
    ).toMatchObject({ phase: 'attempting', attempt: 1 });
    await agent.report('GpuXidError', false);
    expect(await result(nodeId)).toBe('succeeded');
    await recordHistory(h.temporal, remediationWorkflowId(nodeId), 'remediation');
    expect(
      (await eventsOf(h, nodeId, 'node.remediation.')).map((e) => [e.type, e.data.attempt ?? null]),
    ).toEqual([
      ['node.remediation.attempted', 1],
      ['node.remediation.succeeded', null],
    ]);
    expect(await node(nodeId)).toMatchObject({ maintenance: false, noScheduleReasons: [] });
    const [op] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items;
    expect(op.status).toBe('succeeded');
  });

  it('not cleared in two attempts: both rungs tried, then maintenance and one escalation listing them', async () => {
    await poolOf('pool-r2');
    const { nodeId, credential } = await joinedNode(h, 'pool-r2');
    const agent = agentOf(h, credential);
    await agent.report('NicFlap', true);
    expect(await result(nodeId)).toBe('escalated');
    const commands = await remediateCommands(h, nodeId);
    expect(commands.map((c) => c.action)).toEqual(['reset-nic', 'reboot']);
    const escalated = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toHaveLength(1);
    expect(escalated[0]!.data).toMatchObject({
      condition: 'NicFlap',
      attempts: [
        { attempt: 1, action: 'reset-nic', outcome: 'timed-out', refuseReason: null },
        { attempt: 2, action: 'reboot', outcome: 'timed-out', refuseReason: null },
      ],
    });
    expect(await node(nodeId)).toMatchObject({ maintenance: true });
    const [op] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items;
    expect(op.status).toBe('failed');
    // Placement refuses it; an operator clears maintenance.
    const placed = await placeAllocation(h, nodeId);
    expect(placed.body.error.details.reasons).toEqual(expect.arrayContaining(['maintenance']));
    expect(
      (await call(h, 'POST', `/v1/nodes/${nodeId}/maintenance`, { body: { maintenance: false } })).body
        .maintenance,
    ).toBe(false);
  });

  it('a refused rung climbs to the next at once; both refused: maintenance, one escalation naming both', async () => {
    await poolOf('pool-r3');
    const { nodeId, credential } = await joinedNode(h, 'pool-r3');
    const agent = agentOf(h, credential);
    await agent.report('GpuXidError', true);
    const next = async (action: string) =>
      (
        await eventually(async () => {
          const items = await agent.commands();
          return items.find((c) => c.action === action);
        })
      ).id;
    await agent.refuse(await next('reset-accelerator'), 'nvidia-smi -r: device busy');
    // The next rung goes out without waiting for the attempt timeout (10 minutes by default).
    await agent.refuse(await next('reboot'), 'reboot: inhibited by a lock');
    expect(await result(nodeId)).toBe('escalated');
    const escalated = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toHaveLength(1);
    expect(escalated[0]!.data.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        action: 'reset-accelerator',
        outcome: 'refused',
        refuseReason: 'nvidia-smi -r: device busy',
      }),
      expect.objectContaining({
        attempt: 2,
        action: 'reboot',
        outcome: 'refused',
        refuseReason: 'reboot: inhibited by a lock',
      }),
    ]);
    expect((await remediateCommands(h, nodeId)).map((c) => [c.action, c.status])).toEqual([
      ['reset-accelerator', 'refused'],
      ['reboot', 'refused'],
    ]);
    expect((await node(nodeId)).maintenance).toBe(true);
  });

  it('a cancelled remediation escalates and ends cancelled', async () => {
    await poolOf('pool-r4');
    const { nodeId, credential } = await joinedNode(h, 'pool-r4');
    await agentOf(h, credential).report('GpuXidError', true);
    const handle = h.temporal.workflow.getHandle(remediationWorkflowId(nodeId));
    await eventually(async () => (await handle.query(remediationProgressQuery)).phase === 'attempting');
    await handle.cancel();
    expect(await handle.result()).toBe('cancelled');
    const [escalated] = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated!.data.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'cancelled' })]);
    const [op] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items;
    expect(op.status).toBe('cancelled');
    expect((await remediateCommands(h, nodeId)).map((c) => c.status)).toEqual(['cancelled']);
  });

  it('operators start one for a reported condition; a running one is returned; rules and keys', async () => {
    await poolOf('pool-r5');
    const { nodeId, credential } = await joinedNode(h, 'pool-r5');
    // A condition that arrives while a remediation runs joins it: still one operation.
    const agent = agentOf(h, credential);
    await agent.report('GpuXidError', true);
    const again = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'GpuXidError', reason: 'ops' },
    });
    expect(again.status).toBe(200);
    expect(
      (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items,
    ).toHaveLength(1);
    for (const body of [{}, { condition: 'gpu xid' }, { condition: 'X', extra: 1 }]) {
      expect((await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, { body })).status).toBe(400);
    }
    const reader = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-rem-reader');
    expect(
      (
        await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
          token: reader.secret,
          body: { condition: 'GpuXidError' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call(h, 'POST', '/v1/agent/conditions', {
          token: h.operatorKey,
          body: { type: 'X', status: true },
        })
      ).status,
    ).toBe(403);
    for (const body of [{ type: 'bad type', status: true }, { type: 'X' }, { type: 'X', status: 'yes' }]) {
      expect((await call(h, 'POST', '/v1/agent/conditions', { token: credential, body })).status).toBe(400);
    }
    await agent.report('GpuXidError', false);
    expect(await result(nodeId)).toBe('succeeded');
  });
});
