import { describe, expect, it } from 'vitest';
import { remediationProgressQuery, remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { readNode, setNode } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import { agentOf, remediateCommands } from '../support/remediation';

// Attempts wait the default 10 minutes: each remediation runs until the test answers it.
const h = useHarness();

const handle = (nodeId: string) => h.temporal.workflow.getHandle(remediationWorkflowId(nodeId));
const operations = async (nodeId: string) =>
  (
    (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items as {
      id: string;
      status: string;
      actor: string;
      reason: string | null;
      result: Record<string, unknown>;
    }[]
  ).sort((a, b) => (a.id < b.id ? -1 : 1));

/** A node of its own pool with GpuXidError reported and remediating, waiting on its first rung. */
async function remediating(poolId: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
  const { nodeId, credential } = await joinedNode(h, poolId);
  const agent = agentOf(h, credential);
  const first = await agent.report('GpuXidError', true, 'xid-79');
  expect(first.body.remediation).toMatchObject({ status: 'running' });
  await eventually(async () => (await handle(nodeId).query(remediationProgressQuery)).phase === 'attempting');
  return { nodeId, agent, opId: first.body.remediation.id as string };
}

/** The remediate commands of the node for one condition. */
const commandsFor = async (nodeId: string, condition: string) =>
  (await remediateCommands(h, nodeId)).filter(
    (c) => (c.data as { condition?: string } | null)?.condition === condition,
  );

describe('a second condition while a remediation runs', () => {
  it('joins the running one, waits in its progress, and is remediated after it as an operation of its own', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q1');
    const second = await agent.report('NicFlap', true, 'link down');
    // The report joins the running remediation: its operation is the answer, nothing new yet.
    expect(second.body.remediation).toMatchObject({ id: opId, status: 'running' });
    expect(await handle(nodeId).query(remediationProgressQuery)).toMatchObject({
      condition: 'GpuXidError',
      queued: ['NicFlap'],
    });
    expect(await operations(nodeId)).toHaveLength(1);
    expect(await commandsFor(nodeId, 'NicFlap')).toEqual([]);

    const firstRun = (await handle(nodeId).describe()).runId;
    await agent.report('GpuXidError', false);
    // The next remediation begins by itself, for NicFlap, and sends its first rung.
    const [command] = await eventually(async () => {
      const found = await commandsFor(nodeId, 'NicFlap');
      return found.length > 0 ? found : undefined;
    });
    expect(command).toMatchObject({ action: 'reset-accelerator', status: 'pending' });
    const [first, next] = await operations(nodeId);
    expect(first).toMatchObject({ id: opId, status: 'succeeded', result: { condition: 'GpuXidError' } });
    expect(next).toMatchObject({
      status: 'running',
      actor: 'system:remediation',
      reason: `queued while ${opId} ran`,
      result: { condition: 'NicFlap', automatic: true },
    });
    expect(command!.operationId).toBe(next!.id);

    await agent.report('NicFlap', false);
    expect(await handle(nodeId).result()).toBe('succeeded');
    // The run that continued as new for NicFlap, and the run that began it itself.
    await recordHistory(h.temporal, remediationWorkflowId(nodeId), 'remediation-continued', firstRun);
    await recordHistory(h.temporal, remediationWorkflowId(nodeId), 'remediation-queued');
    expect((await operations(nodeId)).map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
    const events = await eventsOf(h, nodeId, 'node.remediation.');
    expect(events.map((e) => [e.type, e.data.condition ?? null, e.operationId])).toEqual([
      ['node.remediation.attempted', 'GpuXidError', opId],
      ['node.remediation.succeeded', null, opId],
      ['node.remediation.attempted', 'NicFlap', next!.id],
      ['node.remediation.succeeded', null, next!.id],
    ]);
    expect(events[1]!.data.queued).toEqual(['NicFlap']);
    expect(events[3]!.data.queued).toBeUndefined();
    expect(await readNode(h, nodeId)).toMatchObject({ maintenance: false, noScheduleReasons: [] });
  });

  it('after an escalation too: the queued condition gets its remediation, the node stays in maintenance', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q2');
    await agent.report('NicFlap', true);
    const refuseRung = async (condition: string, action: string) => {
      const command = await eventually(async () =>
        (await commandsFor(nodeId, condition)).find((c) => c.action === action && c.status === 'pending'),
      );
      await agent.refuse(command.id, `${action}: no`);
    };
    await refuseRung('GpuXidError', 'reset-accelerator');
    await refuseRung('GpuXidError', 'reboot');
    await eventually(async () => (await commandsFor(nodeId, 'NicFlap')).length > 0);
    const [escalated] = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toMatchObject({
      operationId: opId,
      data: { condition: 'GpuXidError', queued: ['NicFlap'] },
    });
    expect((await operations(nodeId)).map((o) => [o.status, o.result.condition])).toEqual([
      ['failed', 'GpuXidError'],
      ['running', 'NicFlap'],
    ]);
    expect((await readNode(h, nodeId)).maintenance).toBe(true);
    await agent.report('NicFlap', false);
    expect(await handle(nodeId).result()).toBe('succeeded');
    // GpuXidError is still reported, but it had its remediation: nothing begins for it again.
    expect(await operations(nodeId)).toHaveLength(2);
  });

  it('an operator’s condition the node never reported is queued the same way, and not held back as automatic', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q3');
    const joined = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'PsuFault', reason: 'PSU 2 amber' },
    });
    expect(joined.status).toBe(200);
    expect(joined.body.operation.id).toBe(opId);
    expect((await readNode(h, nodeId)).conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'PsuFault',
          status: true,
          source: 'operator',
          reason: 'PSU 2 amber',
        }),
      ]),
    );
    await agent.report('GpuXidError', false);
    await eventually(async () => (await commandsFor(nodeId, 'PsuFault')).length > 0);
    expect((await operations(nodeId))[1]).toMatchObject({
      status: 'running',
      result: { condition: 'PsuFault', automatic: false },
    });
    await agent.report('PsuFault', false);
    expect(await handle(nodeId).result()).toBe('succeeded');
  });

  it.each(['with the clear', 'once the first succeeded'] as const)(
    'a second condition reported %s is remediated, whichever run its report reaches',
    async (when) => {
      const { nodeId, agent, opId } = await remediating(`pool-q6-${when.length}`);
      // The report may join the ending run, reach it after its last step, or start the next run.
      if (when === 'with the clear') {
        await Promise.all([agent.report('GpuXidError', false), agent.report('NicFlap', true)]);
      } else {
        await agent.report('GpuXidError', false);
        await eventually(async () => (await operations(nodeId))[0]!.status === 'succeeded', 10_000, 5);
        await agent.report('NicFlap', true);
      }
      await eventually(async () => (await commandsFor(nodeId, 'NicFlap')).length > 0);
      const [first, next] = await operations(nodeId);

      expect(first).toMatchObject({ id: opId, status: 'succeeded' });
      expect(next).toMatchObject({ status: 'running', result: { condition: 'NicFlap' } });
      await agent.report('NicFlap', false);
      expect(await handle(nodeId).result()).toBe('succeeded');
      expect((await operations(nodeId)).map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
    },
  );

  it('the liveness sweep’s NodeUnreachable is no fault to remediate: nothing queued for it', async () => {
    const { nodeId, agent } = await remediating('pool-q5');
    const node = await readNode(h, nodeId);
    await setNode(h, nodeId, {
      noScheduleReasons: [...node.noScheduleReasons, 'unreachable'],
      conditions: [
        ...node.conditions,
        {
          type: 'NodeUnreachable',
          status: true,
          reason: 'HeartbeatTimeout',
          since: new Date().toISOString(),
        },
      ],
    });
    await agent.report('GpuXidError', false);
    // The result follows continued runs: 'succeeded' with one operation means none began after it.
    expect(await handle(nodeId).result()).toBe('succeeded');
    expect((await operations(nodeId)).map((o) => o.status)).toEqual(['succeeded']);
    const [succeeded] = await eventsOf(h, nodeId, 'node.remediation.succeeded');
    expect(succeeded!.data.queued).toBeUndefined();
  });

  it('a remediation cancelled by DELETE ends there: escalated, cancelled, and the queued one does not begin', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q4');
    await agent.report('NicFlap', true);
    const cancelled = await call(h, 'DELETE', `/v1/operations/${opId}`, { body: { reason: 'hands on' } });
    expect(cancelled.body).toMatchObject({ status: 'cancelled', cancellation: { reason: 'hands on' } });
    // The result follows continued runs: 'cancelled' is the last run's, so none began after it.
    expect(await handle(nodeId).result()).toBe('cancelled');
    const [escalated] = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toMatchObject({
      actor: 'key:bootstrap-operator',
      data: { attempts: [expect.objectContaining({ action: 'reset-accelerator', outcome: 'cancelled' })] },
    });
    expect((await readNode(h, nodeId)).maintenance).toBe(true);
    expect((await operations(nodeId)).map((o) => o.status)).toEqual(['cancelled']);
    expect(await commandsFor(nodeId, 'NicFlap')).toEqual([]);
  });
});
