import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLivenessActivities } from '../../activities/liveness';
import { createSimulator, type Simulator } from '../../agent/simulator';
import { closeServer, listen } from '../../api/server';
import { DEFAULT_LIVENESS } from '../../domain/liveness';
import { placeAllocation } from '../support/builders';
import { createToken } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness({ worker: false });
let simulator: Simulator;
let stop: () => Promise<void>;
let nodes: string[];

const node = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;
const adopt = (id: string) => call(h, 'POST', `/v1/nodes/${id}/adopt`, { body: { reason: 'new firmware' } });
const setAcceptance = (acceptance: unknown) =>
  call(h, 'PATCH', '/v1/pools/pool-acc', { body: { policy: { acceptance } } });
/** The node once it has left `adopting`, or has an acceptance failure recorded. */
const decided = (id: string) =>
  eventually(async () => {
    const view = await node(id);
    const failed = view.noScheduleReasons.some((r: string) => r.startsWith('acceptance:'));
    return view.provisionState !== 'adopting' || failed ? view : undefined;
  });
const acceptanceCommands = async (id: string) =>
  (
    (await call(h, 'GET', `/v1/nodes/${id}/commands?kind=run`)).body.items as { requestedBy: string }[]
  ).filter((c) => c.requestedBy === 'system:acceptance');

beforeAll(async () => {
  await seedPool(h, {
    id: 'pool-acc',
    tenantId: 'acme',
    policy: { acceptance: { action: 'acceptance' } },
  });
  const token = await createToken(h, { poolId: 'pool-acc' });
  const { server, port } = await listen(h.deps, 0);
  stop = () => closeServer(server);
  simulator = await createSimulator({
    api: `http://127.0.0.1:${port}`,
    token: token.secret,
    count: 3,
    heartbeatEveryMs: 500,
    pollWaitSeconds: 2,
  });
  nodes = simulator.agents.map((a) => a.nodeId);
});
afterAll(async () => {
  await simulator?.close();
  await stop?.();
});

describe("acceptance runs the pool's plan: the node's checks and its acceptance action", () => {
  it('happy: a node that joins stays adopting, out of placement, until its acceptance action exits 0', async () => {
    const id = nodes[0]!;
    const adopted = await decided(id);
    expect(adopted).toMatchObject({ provisionState: 'adopted', noScheduleReasons: [] });
    const events = await eventsOf(h, id);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['node.adopting', 'node.command.requested', 'node.acceptance.started']);
    expect(types.indexOf('node.command.succeeded')).toBeLessThan(types.indexOf('node.adopted'));
    const started = events.find((e) => e.type === 'node.acceptance.started')!;
    expect(started).toMatchObject({ actor: 'system:acceptance', data: { action: 'acceptance' } });
    const [command] = await acceptanceCommands(id);
    expect(command).toMatchObject({
      id: started.data.commandId,
      action: 'acceptance',
      status: 'succeeded',
      reason: 'acceptance',
    });
    expect(types.filter((t) => t === 'node.adopted')).toHaveLength(1);
  });

  it('sad: an acceptance action that fails keeps the node adopting and says so; adopt again runs it again', async () => {
    const id = nodes[1]!;
    await decided(id);
    simulator.actionOutcomes({ acceptance: 'fail' }, id);
    expect((await adopt(id)).body.provisionState).toBe('adopting');
    const failed = await decided(id);
    expect(failed).toMatchObject({ provisionState: 'adopting', noScheduleReasons: ['acceptance:action'] });
    const [event] = await eventsOf(h, id, 'node.acceptance.failed');
    expect(event).toMatchObject({
      actor: 'system:acceptance',
      data: { check: 'action', reason: expect.stringMatching(/^acceptance exited 1/) },
    });
    const refused = await placeAllocation(h, id);
    expect(refused.body.error.details.reasons).toContain('acceptance:action');

    // Adopt again: a new run, the failure cleared while it runs; it passes now.
    simulator.actionOutcomes({}, id);
    const again = await adopt(id);
    expect(again.body).toMatchObject({ provisionState: 'adopting', noScheduleReasons: [] });
    expect(await decided(id)).toMatchObject({ provisionState: 'adopted', noScheduleReasons: [] });
    expect(await acceptanceCommands(id)).toHaveLength(3);
  });

  it('edge: adopt retried while the action runs queues nothing twice; an agent that never takes it expires it', async () => {
    const id = nodes[2]!;
    await decided(id);
    await setAcceptance({ expiresIn: '1s' });
    await simulator.pause(id);
    const first = await adopt(id);
    const retried = await adopt(id);
    expect(retried.body).toMatchObject({ provisionState: 'adopting', version: first.body.version });
    const commands = await acceptanceCommands(id);
    expect(commands).toHaveLength(2); // the join's, and this adopt's one
    const pending = (await call(h, 'GET', `/v1/nodes/${id}/commands?kind=run&status=pending`)).body.items;
    expect(pending).toHaveLength(1);

    // Never taken: past its expiresAt the sweep expires it, and acceptance fails on it (once).
    await eventually(async () => (Date.now() > Date.parse(pending[0].expiresAt) ? true : undefined));
    const sweep = createLivenessActivities(h.db);
    await sweep.sweepLiveness(DEFAULT_LIVENESS);
    await sweep.sweepLiveness(DEFAULT_LIVENESS);
    expect(await node(id)).toMatchObject({
      provisionState: 'adopting',
      noScheduleReasons: ['acceptance:action'],
    });
    const failures = await eventsOf(h, id, 'node.acceptance.failed');
    expect(failures.map((e) => [e.data.check, e.data.reason, e.data.commandId])).toEqual([
      ['action', 'no agent took acceptance before it expired', pending[0].id],
    ]);

    // Back, with the plan's action taken off: the node's own checks alone adopt it.
    simulator.resume(id);
    await setAcceptance(null);
    expect((await adopt(id)).body).toMatchObject({ provisionState: 'adopted', noScheduleReasons: [] });
    await setAcceptance({ action: 'acceptance' });
  });

  it('error: a plan with a bad action name or expiresIn is refused', async () => {
    for (const acceptance of [{ action: 'Not An Action' }, { expiresIn: '8d' }, { other: 1 }]) {
      const reply = await setAcceptance(acceptance);
      expect(reply.status, JSON.stringify(acceptance)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
  });
});
