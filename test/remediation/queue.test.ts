import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { readNode, setNode } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import {
  agentOf,
  remediateCommands,
  remediationsOf,
  remediationWhen,
  operationRunResult,
  WORKER_BOUND_MS,
} from '../support/remediation';

// Attempts wait the default 10 minutes: each remediation runs until the test answers it.
const h = useHarness();

/** A node of its own pool with GpuXidError reported and remediating, waiting on its first rung. */
async function remediating(poolId: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
  const { nodeId, credential } = await joinedNode(h, poolId);
  const agent = agentOf(h, credential);
  const first = await agent.report('GpuXidError', true, 'xid-79');
  expect(first.body.remediation).toMatchObject({ status: 'pending' });
  const opId = first.body.remediation.id as string;
  await remediationWhen(h, opId);
  return { nodeId, agent, opId };
}

/** The remediate commands of the node for one condition. */
const commandsFor = async (nodeId: string, condition: string) =>
  (await remediateCommands(h, nodeId)).filter(
    (c) => (c.data as { condition?: string } | null)?.condition === condition,
  );

/**
 * The node's remediations in the listing where `opId` first shows ended: one read, so whatever its
 * end requested is there with it.
 */
const whenEnded = (nodeId: string, opId: string) =>
  eventually(async () => {
    const listed = await remediationsOf(h, nodeId);
    return ['succeeded', 'failed', 'cancelled'].includes(listed.find((o) => o.id === opId)?.status)
      ? listed
      : undefined;
  }, WORKER_BOUND_MS);

describe('a second condition while a remediation runs', () => {
  it('joins the running one, waits in its record, and is requested by the ending one’s own transaction as an operation of its own', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q1');
    const second = await agent.report('NicFlap', true, 'link down');
    // The report joins the running remediation: its operation is the answer, nothing new yet.
    expect(second.body.remediation).toMatchObject({
      id: opId,
      status: 'running',
      progress: { waitingFor: { condition: 'GpuXidError', queued: ['NicFlap'] } },
    });
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.progress).toMatchObject({
      phase: 'attempting',
      waitingFor: { condition: 'GpuXidError', queued: ['NicFlap'] },
    });
    expect(await remediationsOf(h, nodeId)).toHaveLength(1);
    expect(await commandsFor(nodeId, 'NicFlap')).toEqual([]);

    const firstRun = (await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).describe()).runId;
    await agent.report('GpuXidError', false);
    // The very listing that shows the first one ended already holds the next: requested in the
    // ending remediation's transaction, for NicFlap, by the system.
    const [first, next, ...more] = await whenEnded(nodeId, opId);
    expect(more).toEqual([]);
    expect(first).toMatchObject({
      id: opId,
      status: 'succeeded',
      result: { condition: 'GpuXidError' },
      progress: { phase: 'succeeded', waitingFor: { queued: ['NicFlap'] } },
    });
    expect(next).toMatchObject({
      kind: 'remediation',
      status: expect.stringMatching(/^(pending|running)$/),
      workflowId: remediationWorkflowId(nodeId),
      actor: 'system:remediation',
      reason: 'queued behind the previous remediation',
      result: { condition: 'NicFlap', automatic: true },
    });
    expect(await operationRunResult(h, opId)).toBe('succeeded');
    // The first run completed: the next is a run of its own (no continue-as-new), begun for it.
    const ended = await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId), firstRun).describe();
    expect(ended.status.name).toBe('COMPLETED');

    // Its workflow sends NicFlap its first rung.
    const [command] = await eventually(async () => {
      const found = await commandsFor(nodeId, 'NicFlap');
      return found.length > 0 ? found : undefined;
    }, WORKER_BOUND_MS);
    expect(command).toMatchObject({ action: 'reset-accelerator', status: 'pending', operationId: next.id });
    expect(await remediationWhen(h, next.id)).toMatchObject({ status: 'running' });

    await agent.report('NicFlap', false);
    expect(await operationRunResult(h, next.id)).toBe('succeeded');
    await recordHistory(h.temporal, remediationWorkflowId(nodeId), 'remediation-queued');
    expect((await remediationsOf(h, nodeId)).map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
    const events = await eventsOf(h, nodeId, 'node.remediation.');
    expect(events.map((e) => [e.type, e.data.condition ?? null, e.operationId])).toEqual([
      ['node.remediation.attempted', 'GpuXidError', opId],
      ['node.remediation.succeeded', null, opId],
      ['node.remediation.attempted', 'NicFlap', next.id],
      ['node.remediation.succeeded', null, next.id],
    ]);
    expect(events[1]!.data.queued).toEqual(['NicFlap']);
    expect(events[3]!.data.queued).toBeUndefined();
    expect(await readNode(h, nodeId)).toMatchObject({ maintenance: false, noScheduleReasons: [] });
  });

  it('after an escalation too: the escalation requests the queued condition’s remediation, the node stays in maintenance', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q2');
    await agent.report('NicFlap', true);
    const refuseRung = async (condition: string, action: string) => {
      const command = await eventually(
        async () =>
          (await commandsFor(nodeId, condition)).find((c) => c.action === action && c.status === 'pending'),
        WORKER_BOUND_MS,
      );
      await agent.refuse(command.id, `${action}: no`);
    };
    await refuseRung('GpuXidError', 'reset-accelerator');
    await refuseRung('GpuXidError', 'reboot');
    const [first, next, ...more] = await whenEnded(nodeId, opId);
    expect(more).toEqual([]);
    expect(first).toMatchObject({ status: 'failed', result: { condition: 'GpuXidError' } });
    expect(next).toMatchObject({ actor: 'system:remediation', result: { condition: 'NicFlap' } });
    const [escalated] = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toMatchObject({
      operationId: opId,
      data: { condition: 'GpuXidError', queued: ['NicFlap'] },
    });
    expect(await operationRunResult(h, opId)).toBe('escalated');
    await eventually(async () => (await commandsFor(nodeId, 'NicFlap')).length > 0, WORKER_BOUND_MS);
    expect((await readNode(h, nodeId)).maintenance).toBe(true);
    await agent.report('NicFlap', false);
    expect(await operationRunResult(h, next.id)).toBe('succeeded');
    // GpuXidError is still reported, but it had its remediation: nothing begins for it again.
    expect((await remediationsOf(h, nodeId)).map((o) => [o.status, o.result.condition])).toEqual([
      ['failed', 'GpuXidError'],
      ['succeeded', 'NicFlap'],
    ]);
  });

  it('an operator’s condition the node never reported is queued the same way, and not held back as automatic', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q3');
    const joined = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'PsuFault', reason: 'PSU 2 amber' },
    });
    expect(joined.status).toBe(200);
    expect(joined.body.operation.id).toBe(opId);
    expect(joined.body.operation.progress.waitingFor.queued).toEqual(['PsuFault']);
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
    const [, next] = await whenEnded(nodeId, opId);
    expect(next).toMatchObject({ result: { condition: 'PsuFault', automatic: false } });
    await eventually(async () => (await commandsFor(nodeId, 'PsuFault')).length > 0, WORKER_BOUND_MS);
    await agent.report('PsuFault', false);
    expect(await operationRunResult(h, next.id)).toBe('succeeded');
  });

  it.each(['with the clear', 'once the first succeeded'] as const)(
    'a second condition reported %s is remediated, whichever side of the first one’s end its report lands',
    async (when) => {
      const { nodeId, agent, opId } = await remediating(`pool-q6-${when.length}`);
      // The report may join the ending remediation (its end requests the next) or come after it.
      if (when === 'with the clear') {
        await Promise.all([agent.report('GpuXidError', false), agent.report('NicFlap', true)]);
      } else {
        await agent.report('GpuXidError', false);
        await whenEnded(nodeId, opId);
        const reported = await agent.report('NicFlap', true);
        expect(reported.body.remediation).toMatchObject({ status: 'pending' });
      }
      await eventually(async () => (await commandsFor(nodeId, 'NicFlap')).length > 0, WORKER_BOUND_MS);
      const [first, next, ...more] = await remediationsOf(h, nodeId);
      expect(more).toEqual([]);
      expect(first).toMatchObject({ id: opId, status: 'succeeded' });
      expect(next).toMatchObject({ status: 'running', result: { condition: 'NicFlap' } });
      await agent.report('NicFlap', false);
      expect(await operationRunResult(h, next.id)).toBe('succeeded');
      expect((await remediationsOf(h, nodeId)).map((o) => o.status)).toEqual(['succeeded', 'succeeded']);
    },
  );

  it('the liveness sweep’s NodeUnreachable is no fault to remediate: nothing queued for it', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q5');
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
    // The listing where it ended would hold anything its end requested: nothing.
    expect((await whenEnded(nodeId, opId)).map((o) => o.status)).toEqual(['succeeded']);
    expect(await operationRunResult(h, opId)).toBe('succeeded');
    const [succeeded] = await eventsOf(h, nodeId, 'node.remediation.succeeded');
    expect(succeeded!.data.queued).toBeUndefined();
  });

  it('a remediation cancelled by DELETE ends there: escalated, cancelled, and the queued one does not begin', async () => {
    const { nodeId, agent, opId } = await remediating('pool-q4');
    await agent.report('NicFlap', true);
    const cancelled = await call(h, 'DELETE', `/v1/operations/${opId}`, { body: { reason: 'hands on' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      progress: { phase: 'cancelled' },
      cancellation: { reason: 'hands on' },
    });
    // Ended in the DELETE's transaction, which requests nothing after it.
    expect((await remediationsOf(h, nodeId)).map((o) => o.status)).toEqual(['cancelled']);
    // Woken, the workflow finds its record ended and ends with it, requesting nothing either.
    expect(await operationRunResult(h, opId)).toBe('cancelled');
    const [escalated] = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toMatchObject({
      actor: 'key:bootstrap-operator',
      data: { attempts: [expect.objectContaining({ action: 'reset-accelerator', outcome: 'cancelled' })] },
    });
    expect((await readNode(h, nodeId)).maintenance).toBe(true);
    expect((await remediationsOf(h, nodeId)).map((o) => o.status)).toEqual(['cancelled']);
    expect(await commandsFor(nodeId, 'NicFlap')).toEqual([]);
  });
});
