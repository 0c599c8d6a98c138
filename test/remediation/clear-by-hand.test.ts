import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { readNode, seedPoolNode, setNode } from '../support/builders';
import { call, eventsOf, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf } from '../support/remediation';
import { expectNodeRouteSecured } from '../support/security';

const h = useHarness();

const clear = (
  nodeId: string,
  type: string,
  body: unknown,
  options: { token?: string; ifMatch?: string } = {},
) =>
  call(h, 'POST', `/v1/nodes/${nodeId}/conditions/${type}/clear`, {
    body,
    token: options.token,
    headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch },
  });

const operationOf = async (nodeId: string) =>
  (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body.items[0];

/** The test's remediation let go: cancelled, its workflow closed. */
async function cancelled(operationId: string, nodeId: string) {
  const reply = await call(h, 'DELETE', `/v1/operations/${operationId}`, {
    body: { reason: 'the test is over' },
  });
  expect(reply.status).toBe(200);
  await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).result();
}

/** A node of `poolId` with `type` reported true by its agent, and the node as it is then. */
async function withCondition(poolId: string, type = 'GpuXidError') {
  const nodeId = await seedPoolNode(h, poolId);
  const since = new Date(Date.now() - 60_000).toISOString();
  await setNode(h, nodeId, {
    conditions: [
      { type, status: true, reason: 'xid-79', since },
      { type: 'NicFlap', status: false, reason: null, since },
    ],
    noScheduleReasons: [`condition:${type}`, 'taint:rma'],
  });
  return { nodeId, since, node: await readNode(h, nodeId) };
}

describe('clearing a condition by hand: happy', () => {
  it('a remediation waiting on a condition the agent never reports succeeds once an operator clears it', async () => {
    // The default attempt waits 10 minutes: only the wake-up of the clear can end it within seconds.
    await seedPool(h, { id: 'pool-c1', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-c1');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'DiskSmartFail', reason: 'smartctl: reallocated sectors' },
    });
    expect(started.status).toBe(202);
    await eventually(async () => ((await agentOf(h, credential).commands()).length > 0 ? true : undefined));
    const before = await readNode(h, nodeId);

    const cleared = await clear(
      nodeId,
      'DiskSmartFail',
      { reason: 'disk swapped, ticket 4711' },
      { ifMatch: `"${before.version}"` },
    );
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ version: before.version + 1, noScheduleReasons: [] });
    expect(cleared.body.conditions).toEqual([
      {
        type: 'DiskSmartFail',
        status: false,
        reason: 'disk swapped, ticket 4711',
        since: expect.any(String),
        source: 'operator',
      },
    ]);
    expect(Date.parse(cleared.body.conditions[0].since)).toBeGreaterThan(
      Date.parse(before.conditions[0].since),
    );
    const op = await eventually(
      async () => {
        const found = await operationOf(nodeId);
        return found.status === 'succeeded' ? found : undefined;
      },
      10_000,
      50,
    );
    expect(op.id).toBe(started.body.operation.id);
    expect(await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).result()).toBe('succeeded');
    expect(await eventsOf(h, nodeId, 'node.condition.cleared')).toEqual([
      expect.objectContaining({
        actor: 'key:bootstrap-operator',
        reason: 'disk swapped, ticket 4711',
        operationId: null,
        data: {
          type: 'DiskSmartFail',
          was: { reason: 'smartctl: reallocated sectors', since: before.conditions[0].since },
        },
      }),
    ]);
    expect((await readNode(h, nodeId)).maintenance).toBe(false);
  });

  it('a tenant key with compute:nodes:remediate clears one on its node; the rest of the node stays', async () => {
    const { nodeId, since, node } = await withCondition('pool-c2');
    const key = await tenantKey(h, 'acme', ['compute:nodes:remediate'], 'acme-remediator');
    const cleared = await clear(
      nodeId,
      'GpuXidError',
      { reason: 'probe was wrong', version: node.version },
      {
        token: key.secret,
      },
    );
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      version: node.version + 1,
      // Only the condition's own reason came off.
      noScheduleReasons: ['taint:rma'],
      conditions: [
        { type: 'NicFlap', status: false, reason: null, since },
        { type: 'GpuXidError', status: false, reason: 'probe was wrong', source: 'operator' },
      ],
    });
    const [event] = await eventsOf(h, nodeId, 'node.condition.cleared');
    expect(event).toMatchObject({ actor: 'key:acme-remediator', reason: 'probe was wrong' });
    // Nothing ran: no remediation was started or ended by it.
    expect(await operationOf(nodeId)).toBeUndefined();
  });

  it("the agent's later reports are taken as ever: false keeps the clear's time, true raises it again", async () => {
    await seedPool(h, { id: 'pool-c3', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-c3');
    const agent = agentOf(h, credential);
    await setNode(h, nodeId, {
      conditions: [{ type: 'NicFlap', status: true, reason: 'link down', since: new Date().toISOString() }],
      noScheduleReasons: ['condition:NicFlap'],
    });
    const cleared = await clear(nodeId, 'NicFlap', { reason: 'cable reseated' });
    const clearedAt = cleared.body.conditions[0].since;
    const reportedFalse = await agent.report('NicFlap', false);
    expect(reportedFalse.body.conditions).toEqual([
      { type: 'NicFlap', status: false, reason: null, since: clearedAt },
    ]);
    expect(reportedFalse.body.remediation).toBeNull();
    const reportedTrue = await agent.report('NicFlap', true, 'link down again');
    expect(reportedTrue.body.remediation).toMatchObject({
      kind: 'remediation',
      status: expect.stringMatching(/^(pending|running)$/),
    });
    expect((await readNode(h, nodeId)).noScheduleReasons).toEqual(['condition:NicFlap']);
    await cancelled(reportedTrue.body.remediation.id, nodeId);
  });
});

describe('clearing a condition by hand: errors', () => {
  it('refuses a condition that is not true, or the liveness sweep’s, with INVALID_STATE naming it', async () => {
    const { nodeId, node } = await withCondition('pool-c4');
    for (const type of ['NicFlap', 'DiskSmartFail']) {
      const reply = await clear(nodeId, type, { reason: 'just in case' });
      expect(reply.status, type).toBe(409);
      expect(reply.body.error, type).toMatchObject({
        code: 'INVALID_STATE',
        message: `condition ${type} is not true on node ${nodeId}`,
        details: { condition: type, trueConditions: ['GpuXidError'] },
      });
    }
    expect(await readNode(h, nodeId)).toEqual(node);
    await setNode(h, nodeId, {
      conditions: [
        ...node.conditions,
        {
          type: 'NodeUnreachable',
          status: true,
          reason: 'HeartbeatTimeout',
          since: node.conditions[0].since,
        },
      ],
      noScheduleReasons: [...node.noScheduleReasons, 'unreachable'],
    });
    const unreachableNode = await readNode(h, nodeId);
    const unreachable = await clear(nodeId, 'NodeUnreachable', { reason: 'it is fine' });
    expect(unreachable.status).toBe(409);
    expect(unreachable.body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: { condition: 'NodeUnreachable' },
    });
    expect(unreachable.body.error.message).toContain('heartbeat');
    expect(await readNode(h, nodeId)).toEqual(unreachableNode);
    expect(await eventsOf(h, nodeId)).toEqual([]);
  });

  it('refuses a stale version with CONFLICT, an unknown node with 404, bad input with 400: changing nothing', async () => {
    const { nodeId, node } = await withCondition('pool-c5');
    const stale = await clear(
      nodeId,
      'GpuXidError',
      { reason: 'fixed' },
      { ifMatch: String(node.version + 1) },
    );
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'CONFLICT', details: { currentVersion: node.version } });
    const missing = await clear('node_01k5w8v3x9q2m4n6p8r0s2t4v6', 'GpuXidError', { reason: 'fixed' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    const bad: [string, string, unknown][] = [
      ['no reason', 'GpuXidError', {}],
      ['an empty reason', 'GpuXidError', { reason: '' }],
      ['a reason of 257 characters', 'GpuXidError', { reason: 'x'.repeat(257) }],
      ['an unknown field', 'GpuXidError', { reason: 'fixed', status: false }],
      ['a type that is no condition type', 'gpu-xid', { reason: 'fixed' }],
      ['versions that disagree', 'GpuXidError', { reason: 'fixed', version: node.version + 1 }],
    ];
    for (const [what, type, body] of bad) {
      const reply = await clear(nodeId, type, body, { ifMatch: String(node.version) });
      expect(reply.status, what).toBe(400);
      expect(reply.body.error.code, what).toBe('INVALID_INPUT');
    }
    expect(await readNode(h, nodeId)).toEqual(node);
    expect(await eventsOf(h, nodeId)).toEqual([]);
  });
});

describe('clearing a condition by hand: security', () => {
  it('needs compute:nodes:remediate on a visible node', async () => {
    await expectNodeRouteSecured(h, {
      method: 'POST',
      path: (id) => `/v1/nodes/${id}/conditions/GpuXidError/clear`,
      body: { reason: 'not yours' },
      action: 'compute:nodes:remediate',
    });
  });

  it('is not an agent route: the node’s own credential cannot clear its condition', async () => {
    await seedPool(h, { id: 'pool-c6', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-c6');
    const reported = await agentOf(h, credential).report('GpuXidError', true, 'xid-79');
    const before = await readNode(h, nodeId);
    const reply = await clear(nodeId, 'GpuXidError', { reason: 'all good' }, { token: credential });
    expect(reply.status).toBe(403);
    expect(await readNode(h, nodeId)).toEqual(before);
    expect(await eventsOf(h, nodeId, 'node.condition.cleared')).toEqual([]);
    await cancelled(reported.body.remediation.id, nodeId);
  });
});
