import { describe, expect, it } from 'vitest';
import { joinedNode } from '../support/agents';
import { readNode, setNode } from '../support/builders';
import { call, eventsOf, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import {
  agentOf,
  remediateCommands,
  remediationsOf,
  remediationWhen,
  operationRunResult,
  WORKER_BOUND_MS,
} from '../support/remediation';

const h = useHarness();
const remediate = (nodeId: string, body: object, options: { token?: string; key?: string } = {}) =>
  call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
    body,
    ...(options.token ? { token: options.token } : {}),
    ...(options.key ? { headers: { 'idempotency-key': options.key } } : {}),
  });

describe('a remediation an operator starts for a condition the node has not reported', () => {
  it('records the condition as operator-reported with the request; the agent’s false report clears it', async () => {
    await seedPool(h, { id: 'pool-op1', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-op1');
    const started = await remediate(
      nodeId,
      { condition: 'GpuXidError', reason: 'dcgm diag level 3 failed' },
      {
        key: 'ticket-4711-remediate',
      },
    );
    expect(started.status).toBe(202);
    expect(started.body.operation).toMatchObject({
      status: 'pending',
      actor: 'key:bootstrap-operator',
      result: { condition: 'GpuXidError', automatic: false },
      progress: { phase: 'waiting-for-worker', waitingFor: { condition: 'GpuXidError' } },
    });
    const opId = started.body.operation.id as string;
    const node = await readNode(h, nodeId);
    expect(node.conditions).toEqual([
      {
        type: 'GpuXidError',
        status: true,
        reason: 'dcgm diag level 3 failed',
        since: expect.any(String),
        source: 'operator',
      },
    ]);
    expect(node.noScheduleReasons).toEqual(['condition:GpuXidError']);
    expect(await eventsOf(h, nodeId, 'node.condition.reported')).toEqual([
      expect.objectContaining({
        actor: 'key:bootstrap-operator',
        reason: 'dcgm diag level 3 failed',
        data: { type: 'GpuXidError', reason: 'dcgm diag level 3 failed', source: 'operator' },
      }),
    ]);
    // The same request again is answered from its key: no second condition, no second event.
    const again = await remediate(
      nodeId,
      { condition: 'GpuXidError', reason: 'dcgm diag level 3 failed' },
      {
        key: 'ticket-4711-remediate',
      },
    );
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(opId);
    expect(await eventsOf(h, nodeId, 'node.condition.reported')).toHaveLength(1);
    expect(await remediationsOf(h, nodeId)).toHaveLength(1);
    await eventually(async () => (await remediateCommands(h, nodeId)).length === 1, WORKER_BOUND_MS);

    await agentOf(h, credential).report('GpuXidError', false);
    expect(await operationRunResult(h, opId)).toBe('succeeded');
    const cleared = await readNode(h, nodeId);
    expect(cleared.conditions).toEqual([
      { type: 'GpuXidError', status: false, reason: null, since: expect.any(String) },
    ]);
    expect(cleared).toMatchObject({ noScheduleReasons: [], maintenance: false });
  });

  it('a condition the node already reports just starts the remediation: nothing recorded for the operator', async () => {
    await seedPool(h, { id: 'pool-op2', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-op2');
    const agent = agentOf(h, credential);
    // The agent's report starts one; stop it so the operator's call is the one that begins.
    const reported = await agent.report('GpuXidError', true, 'xid-79');
    await remediationWhen(h, reported.body.remediation.id);
    expect((await call(h, 'DELETE', `/v1/operations/${reported.body.remediation.id}`)).status).toBe(200);
    expect(await operationRunResult(h, reported.body.remediation.id)).toBe('cancelled');
    const tenant = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:remediate'], 'acme-op2');
    const started = await remediate(nodeId, { condition: 'GpuXidError' }, { token: tenant.secret });
    expect(started.status).toBe(202);
    expect(started.body.operation).toMatchObject({
      status: 'pending',
      actor: 'key:acme-op2',
      result: { condition: 'GpuXidError', automatic: false },
    });
    expect(started.body.operation.id).not.toBe(reported.body.remediation.id);
    expect((await readNode(h, nodeId)).conditions).toEqual([
      { type: 'GpuXidError', status: true, reason: 'xid-79', since: expect.any(String) },
    ]);
    expect(await eventsOf(h, nodeId, 'node.condition.reported')).toEqual([]);
    // Its workflow starts once the cancelled one's run closed (one run of remediation/<node> at a time).
    await remediationWhen(h, started.body.operation.id);
    await agent.report('GpuXidError', false);
    expect(await operationRunResult(h, started.body.operation.id)).toBe('succeeded');
  });

  it('refused on a decommissioned node, and for a body out of shape, before anything is recorded', async () => {
    await seedPool(h, { id: 'pool-op3', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId } = await joinedNode(h, 'pool-op3');
    for (const body of [{ condition: 'gpu xid' }, { condition: 'GpuXidError', reason: 7 }, { reason: 'x' }]) {
      expect((await remediate(nodeId, body)).status).toBe(400);
    }
    expect((await readNode(h, nodeId)).conditions).toEqual([]);
    // Decommissioned: no control runs on it, and nothing is recorded for it.
    await setNode(h, nodeId, { provisionState: 'decommissioned' });
    const refused = await remediate(nodeId, { condition: 'GpuXidError' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('INVALID_STATE');
    expect(await readNode(h, nodeId)).toMatchObject({ conditions: [], noScheduleReasons: [] });
    expect(await eventsOf(h, nodeId, 'node.condition.reported')).toEqual([]);
    expect(await remediationsOf(h, nodeId)).toEqual([]);
  });
});
