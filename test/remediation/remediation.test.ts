import { describe, expect, it } from 'vitest';
import { remediationProgressQuery, remediationWorkflowId, wakeSignal } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { placeAllocation, readNode } from '../support/builders';
import { call, eventsOf, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import {
  agentOf,
  remediateCommands,
  remediationsOf,
  remediationWhen,
  operationRunResult,
} from '../support/remediation';
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

const node = (id: string) => readNode(h, id);

describe('remediation', () => {
  it('a reported fault gets the first rung; clearing it succeeds', async () => {
    await poolOf('pool-r1');
    const { nodeId, credential } = await joinedNode(h, 'pool-r1');
    const agent = agentOf(h, credential);
    const reported = await agent.report('GpuXidError', true, 'xid-79');
    expect(reported.status).toBe(200);
    // Recorded with the report, before any worker took it: pending, waiting for a worker.
    expect(reported.body.remediation).toMatchObject({
      kind: 'remediation',
      status: 'pending',
      workflowId: remediationWorkflowId(nodeId),
      progress: {
        kind: 'remediation',
        phase: 'waiting-for-worker',
        startedAt: null,
        waitingFor: { condition: 'GpuXidError', attempt: 0, action: null, queued: [] },
      },
    });
    const opId = reported.body.remediation.id as string;
    expect(await node(nodeId)).toMatchObject({
      noScheduleReasons: ['condition:GpuXidError'],
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79' }],
    });
    const command = await agent.nextCommand();
    expect(command).toMatchObject({ kind: 'remediate', action: 'reset-accelerator' });
    // The record names the rung it waits on; the workflow's `progress` query answers the same.
    const attempting = await remediationWhen(h, opId);
    expect(attempting).toMatchObject({
      status: 'running',
      progress: {
        phase: 'attempting',
        startedAt: expect.any(String),
        nextCheckAt: attempting.progress.waitingFor.attemptDeadline,
        waitingFor: {
          condition: 'GpuXidError',
          attempt: 1,
          action: 'reset-accelerator',
          attemptDeadline: expect.any(String),
          ladder: ['reset-accelerator', 'reboot'],
          attempts: [{ attempt: 1, action: 'reset-accelerator', commandId: command!.id, outcome: null }],
        },
      },
    });
    const handle = h.temporal.workflow.getHandle(remediationWorkflowId(nodeId));
    expect(await handle.query(remediationProgressQuery)).toEqual(attempting.progress);
    // The Temporal UI's current details put it in the same words as the console and the CLI.
    const meta = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(meta.currentDetails).toMatch(
      /^Remediating GpuXidError: attempt 1 of at most 2 \(ladder reset-accelerator → reboot\), reset-accelerator; waiting for GpuXidError to clear until \d\d:\d\dZ\.$/,
    );
    // An ack means the action ran; the attempt still waits for the condition to clear.
    await agent.ack(command!.id);
    // Woken, the attempt looks at the acked command and the condition again, and goes on waiting.
    await signalAndAwaitStep(h.temporal, remediationWorkflowId(nodeId), wakeSignal.name);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(await handle.query(remediationProgressQuery)).toMatchObject({
      phase: 'attempting',
      waitingFor: { attempt: 1 },
    });
    await agent.report('GpuXidError', false);
    expect(await operationRunResult(h, opId)).toBe('succeeded');
    await recordHistory(h.temporal, remediationWorkflowId(nodeId), 'remediation');
    expect(
      (await eventsOf(h, nodeId, 'node.remediation.')).map((e) => [e.type, e.data.attempt ?? null]),
    ).toEqual([
      ['node.remediation.attempted', 1],
      ['node.remediation.succeeded', null],
    ]);
    expect(await node(nodeId)).toMatchObject({ maintenance: false, noScheduleReasons: [] });
    const [op] = await remediationsOf(h, nodeId);
    expect(op).toMatchObject({
      id: opId,
      status: 'succeeded',
      progress: {
        phase: 'succeeded',
        waitingFor: { attempts: [expect.objectContaining({ outcome: 'cleared' })] },
      },
    });
  });

  it('not cleared in two attempts: both rungs tried, then maintenance and one escalation listing them', async () => {
    await poolOf('pool-r2');
    const { nodeId, credential } = await joinedNode(h, 'pool-r2');
    const agent = agentOf(h, credential);
    const reported = await agent.report('NicFlap', true);
    expect(await operationRunResult(h, reported.body.remediation.id)).toBe('escalated');
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
    const [op] = await remediationsOf(h, nodeId);
    expect(op).toMatchObject({ status: 'failed', progress: { phase: 'escalated' } });
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
    const reported = await agent.report('GpuXidError', true);
    const next = async (action: string) => (await agent.nextCommand(action)).id;
    await agent.refuse(await next('reset-accelerator'), 'nvidia-smi -r: device busy');
    // The next rung goes out without waiting for the attempt timeout (10 minutes by default).
    await agent.refuse(await next('reboot'), 'reboot: inhibited by a lock');
    expect(await operationRunResult(h, reported.body.remediation.id)).toBe('escalated');
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
    const reported = await agentOf(h, credential).report('GpuXidError', true);
    await remediationWhen(h, reported.body.remediation.id);
    // Cancelled from the Temporal UI ("Request Cancellation"): the workflow runs the clean-up itself.
    const handle = h.temporal.workflow.getHandle(remediationWorkflowId(nodeId));
    await handle.cancel();
    expect(await handle.result()).toBe('cancelled');
    const [escalated] = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated!.data.attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'cancelled' })]);
    const [op] = await remediationsOf(h, nodeId);
    expect(op).toMatchObject({ status: 'cancelled', progress: { phase: 'cancelled' } });
    expect((await remediateCommands(h, nodeId)).map((c) => c.status)).toEqual(['cancelled']);
  });

  it('operators start one for a reported condition; a running one is returned; rules and keys', async () => {
    await poolOf('pool-r5');
    const { nodeId, credential } = await joinedNode(h, 'pool-r5');
    // A condition that arrives while a remediation runs joins it: still one operation.
    const agent = agentOf(h, credential);
    const reported = await agent.report('GpuXidError', true);
    const again = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'GpuXidError', reason: 'ops' },
    });
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(reported.body.remediation.id);
    expect(await remediationsOf(h, nodeId)).toHaveLength(1);
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
    expect(await operationRunResult(h, reported.body.remediation.id)).toBe('succeeded');
  });
});
