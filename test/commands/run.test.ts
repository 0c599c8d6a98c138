import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLivenessActivities } from '../../activities/liveness';
import type { Simulator } from '../../agent/simulator';
import { DEFAULT_LIVENESS } from '../../domain/liveness';
import { call, eventsOf, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { simulatedFleet, type SimulatedFleet } from '../support/simulated-fleet';

const h = useHarness({ worker: false });
let fleet: SimulatedFleet;
let simulator: Simulator;
let nodes: string[];

beforeAll(async () => {
  fleet = await simulatedFleet(h, { poolId: 'pool-cmd', count: 4, heartbeatEveryMs: 500, rebootMs: 200 });
  ({ simulator, nodes } = fleet);
});
afterAll(() => fleet?.close());

const run = (nodeId: string, body: unknown, options: { token?: string; key?: string } = {}) =>
  call(h, 'POST', `/v1/nodes/${nodeId}/commands`, {
    body,
    token: options.token,
    headers: options.key ? { 'idempotency-key': options.key } : {},
  });

/** The command once it has ended (the API holds the answer until then). */
async function ended(id: string) {
  for (;;) {
    const reply = await call(h, 'GET', `/v1/commands/${id}?wait=10`);
    expect(reply.status).toBe(200);
    if (!['pending', 'running'].includes(reply.body.status)) return reply.body;
  }
}

describe('node commands: a configured action, run by the agent, its output back', () => {
  it('runs diagnostics and returns its exit code and output; each step an event naming who asked', async () => {
    const nodeId = nodes[0]!;
    const asked = await run(nodeId, { action: 'diagnostics', reason: 'xid storm on b7, ticket 4711' });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({
      nodeId,
      kind: 'run',
      action: 'diagnostics',
      args: {},
      status: 'pending',
      requestedBy: expect.stringMatching(/^key:/),
      reason: 'xid storm on b7, ticket 4711',
      exitCode: null,
    });
    expect(Date.parse(asked.body.expiresAt) - Date.parse(asked.body.createdAt)).toBe(3_600_000);

    const done = await ended(asked.body.id);
    expect(done).toMatchObject({ status: 'succeeded', exitCode: 0, statusReason: null });
    expect(done.output.stdout).toContain('all GPUs healthy');
    expect(done.output).toMatchObject({ stderr: '', droppedBytes: 0 });
    expect(Date.parse(done.startedAt)).toBeLessThanOrEqual(Date.parse(done.finishedAt));

    const events = await eventsOf(h, nodeId, 'node.command.');
    expect(events.map((e) => [e.type, e.actor])).toEqual([
      ['node.command.requested', asked.body.requestedBy],
      ['node.command.started', `node:${nodeId}`],
      ['node.command.succeeded', `node:${nodeId}`],
    ]);
    for (const event of events) {
      expect(event.data).toMatchObject({
        commandId: asked.body.id,
        action: 'diagnostics',
        requestedBy: asked.body.requestedBy,
      });
      expect(event.reason).toBe('xid storm on b7, ticket 4711');
    }

    // What the agent said it runs, as the console offers it.
    const actions = (await call(h, 'GET', `/v1/nodes/${nodeId}/actions`)).body;
    expect(actions.items.map((a: { name: string }) => a.name)).toEqual([
      'diagnostics',
      'logs',
      'driver-upgrade',
      'acceptance',
      'reboot',
    ]);
    expect(actions.items[1]).toEqual({
      name: 'logs',
      params: { since: { pattern: '[0-9]+[smhd]', default: '1h' } },
      timeoutSeconds: 60,
      restarts: false,
    });

    // The node's list shows it, without the output.
    const listed = await call(h, 'GET', `/v1/nodes/${nodeId}/commands`);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id: asked.body.id, status: 'succeeded', output: null }),
    ]);
  });

  it('passes declared arguments; the agent refuses a value its pattern does not take, and nothing runs', async () => {
    const nodeId = nodes[1]!;
    const logs = await ended(
      (await run(nodeId, { action: 'logs', args: { since: '2h' }, reason: 'look' })).body.id,
    );
    expect(logs).toMatchObject({ status: 'succeeded', args: { since: '2h' } });
    expect(logs.output.stdout).toContain('since 2h');
    // The default fills a parameter not given.
    const byDefault = await run(nodeId, { action: 'logs', reason: 'look' });
    expect(byDefault.body.args).toEqual({ since: '1h' });
    await ended(byDefault.body.id);

    const refused = await ended(
      (await run(nodeId, { action: 'logs', args: { since: 'yesterday; rm -rf /' }, reason: 'look' })).body.id,
    );
    expect(refused).toMatchObject({
      status: 'refused',
      statusReason: 'since="yesterday; rm -rf /" does not match the pattern [0-9]+[smhd] of action logs',
      startedAt: null,
      exitCode: null,
    });
    const [event] = await eventsOf(h, nodeId, 'node.command.refused');
    expect(event!.data).toMatchObject({ commandId: refused.id, reason: refused.statusReason });
  });

  it('refuses, before anything is recorded, an action the agent does not run and a parameter it does not declare', async () => {
    const nodeId = nodes[1]!;
    const before = (await call(h, 'GET', `/v1/nodes/${nodeId}/commands?limit=100`)).body.items.length;
    const unknown = await run(nodeId, { action: 'format-disks', reason: 'oops' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: 'INVALID_INPUT',
      message:
        "the node's agent has no action format-disks (configured: diagnostics, logs, driver-upgrade, acceptance, reboot); actions are set in its --config file",
    });
    const undeclared = await run(nodeId, { action: 'diagnostics', args: { gpu: '0' }, reason: 'x' });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error.message).toBe('action diagnostics has no parameter gpu (declared: none)');
    for (const body of [
      { action: 'diagnostics' },
      { action: 'Diagnostics!', reason: 'x' },
      { action: 'diagnostics', reason: 'x', command: 'rm -rf /' },
      { action: 'diagnostics', reason: 'x', expiresIn: '8d' },
      { action: 'logs', reason: 'x', args: { since: 'a\nb' } },
    ]) {
      const reply = await run(nodeId, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}/commands?limit=100`)).body.items).toHaveLength(before);
  });

  it('an action that fails reports its exit code and stderr', async () => {
    const nodeId = nodes[2]!;
    simulator.actionOutcomes({ 'driver-upgrade': 'fail' }, nodeId);
    const failed = await ended((await run(nodeId, { action: 'driver-upgrade', reason: 'roll 550' })).body.id);
    expect(failed).toMatchObject({ status: 'failed', exitCode: 1, statusReason: 'driver-upgrade exited 1' });
    expect(failed.output.stderr).toBe('driver-upgrade: failed (simulated)\n');
    const [event] = await eventsOf(h, nodeId, 'node.command.failed');
    expect(event!.data).toMatchObject({ exitCode: 1, reason: 'driver-upgrade exited 1' });
    simulator.actionOutcomes({}, nodeId);
  });

  it('waits for a node that is offline and runs on its return; one that outlives expiresAt expires unrun', async () => {
    const nodeId = nodes[3]!;
    await simulator.pause(nodeId);
    const waiting = await run(nodeId, { action: 'diagnostics', reason: 'when it is back' });
    const expiring = await run(nodeId, { action: 'diagnostics', reason: 'only now', expiresIn: '1s' });
    expect((await call(h, 'GET', `/v1/commands/${waiting.body.id}?wait=1`)).body.status).toBe('pending');
    // Past its expiresAt, the sweep ends it: never delivered.
    await eventually(async () => (Date.now() > Date.parse(expiring.body.expiresAt) ? true : undefined));
    await createLivenessActivities(h.db).sweepLiveness(DEFAULT_LIVENESS);
    const expired = (await call(h, 'GET', `/v1/commands/${expiring.body.id}`)).body;
    expect(expired).toMatchObject({ status: 'expired', statusReason: 'not delivered before it expired' });
    expect(
      (await eventsOf(h, nodeId, 'node.command.expired')).map((e) => [e.actor, e.data.commandId]),
    ).toEqual([['system:commands', expiring.body.id]]);

    simulator.resume(nodeId);
    expect(await ended(waiting.body.id)).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect((await call(h, 'GET', `/v1/commands/${expiring.body.id}`)).body.status).toBe('expired');
    expect((await eventsOf(h, nodeId, 'node.command.started')).map((e) => e.data.commandId)).toEqual([
      waiting.body.id,
    ]);
  });

  it('answers a retried Idempotency-Key with its command; another request under it is refused', async () => {
    const nodeId = nodes[0]!;
    const body = { action: 'logs', args: { since: '5m' }, reason: 'retry me' };
    const first = await run(nodeId, body, { key: 'cmd-key-000001' });
    const again = await run(nodeId, body, { key: 'cmd-key-000001' });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.id).toBe(first.body.id);
    const other = await run(nodeId, { ...body, args: { since: '6m' } }, { key: 'cmd-key-000001' });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(
      (await eventsOf(h, nodeId, 'node.command.requested')).filter((e) => e.reason === 'retry me'),
    ).toHaveLength(1);
    await ended(first.body.id);
  });

  it('withdraws a pending command; one that ran cannot be cancelled', async () => {
    const nodeId = nodes[3]!;
    await simulator.pause(nodeId);
    const pending = await run(nodeId, { action: 'diagnostics', reason: 'maybe' });
    const cancelled = await call(h, 'DELETE', `/v1/commands/${pending.body.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      statusReason: expect.stringMatching(/^cancelled by key:/),
    });
    expect((await call(h, 'DELETE', `/v1/commands/${pending.body.id}`)).status).toBe(200);
    simulator.resume(nodeId);
    const ran = await ended((await run(nodeId, { action: 'diagnostics', reason: 'now' })).body.id);
    const refused = await call(h, 'DELETE', `/v1/commands/${ran.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe(
      `command ${ran.id} is succeeded: only a command the node has not started can be cancelled`,
    );
    // The withdrawn one never started.
    expect((await eventsOf(h, nodeId, 'node.command.started')).map((e) => e.data.commandId)).not.toContain(
      pending.body.id,
    );
  });

  it('needs compute:nodes:command to run or read output; compute:nodes:read lists', async () => {
    const nodeId = nodes[0]!;
    const reader = await tenantKey(h, 'acme', ['compute:nodes:read']);
    const runner = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:command'], 'runner');
    const other = await tenantKey(h, 'globex', ['compute:nodes:read', 'compute:nodes:command'], 'other');
    expect((await run(nodeId, { action: 'diagnostics', reason: 'r' }, { token: reader.secret })).status).toBe(
      403,
    );
    const mine = await run(nodeId, { action: 'diagnostics', reason: 'r' }, { token: runner.secret });
    expect(mine.status).toBe(201);
    expect(mine.body.requestedBy).toBe('key:runner');
    expect((await call(h, 'GET', `/v1/commands/${mine.body.id}`, { token: reader.secret })).status).toBe(403);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}/commands`, { token: reader.secret })).status).toBe(200);
    expect((await call(h, 'GET', `/v1/commands/${mine.body.id}`, { token: other.secret })).status).toBe(404);
    expect((await run(nodeId, { action: 'diagnostics', reason: 'r' }, { token: other.secret })).status).toBe(
      404,
    );
    await ended(mine.body.id);
  });
});
