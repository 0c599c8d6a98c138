import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, type RemediationBehaviour, type Simulator } from '../../agent/simulator';
import { closeServer, listen } from '../../api/server';
import { remediationWorkflowId } from '../../workflows/definitions';
import { createToken } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import { remediateCommands, remediationsOf, operationRunResult } from '../support/remediation';

const h = useHarness();
let simulator: Simulator;
let stop: () => Promise<void>;

/** One simulated node per case, each told how to answer each rung. */
const CASES = {
  climbs: { 'reset-accelerator': 'fail', reboot: 'clear' },
  refusesAll: 'fail',
  acksWithoutClearing: 'ack',
  silent: 'ignore',
  // The pool's own ladder: refused, ran, never answered — two ran, so the fourth rung is never tried.
  ownLadder: { 'drain-gpu': 'fail', 'reset-accelerator': 'ack', reboot: 'ignore', 'power-cycle': 'clear' },
} satisfies Record<string, RemediationBehaviour>;
type Case = keyof typeof CASES;
const nodeOf = {} as Record<Case, string>;

const OWN_LADDER = ['drain-gpu', 'reset-accelerator', 'reboot', 'power-cycle'];

beforeAll(async () => {
  // Long enough for a loaded machine to deliver and ack within one attempt.
  await seedPool(h, {
    id: 'pool-ladder',
    tenantId: 'acme',
    kind: 'provider',
    policy: { maxUnhealthy: 10, remediation: { GpuXidError: { attemptTimeout: '3s' } } },
  });
  // A minute per attempt: a refused rung's next one is sent far sooner, however loaded the machine.
  await seedPool(h, {
    id: 'pool-ladder-climb',
    tenantId: 'acme',
    kind: 'provider',
    policy: { maxUnhealthy: 10, remediation: { GpuXidError: { attemptTimeout: '1m' } } },
  });
  await seedPool(h, {
    id: 'pool-own-ladder',
    tenantId: 'acme',
    kind: 'provider',
    policy: { maxUnhealthy: 10, remediation: { GpuXidError: { ladder: OWN_LADDER, attemptTimeout: '1s' } } },
  });
  const shared = await createToken(h, { poolId: 'pool-ladder' });
  const own = await createToken(h, { poolId: 'pool-own-ladder' });
  const climb = await createToken(h, { poolId: 'pool-ladder-climb' });
  const tokenOf = (name: Case) =>
    name === 'ownLadder' ? own.secret : name === 'climbs' ? climb.secret : shared.secret;
  const { server, port } = await listen(h.deps, 0);
  stop = () => closeServer(server);
  const cases = Object.keys(CASES) as Case[];
  simulator = await createSimulator({
    api: `http://127.0.0.1:${port}`,
    machines: cases.map((name) => ({
      hostname: `sim-${name.toLowerCase()}`,
      token: tokenOf(name),
    })),
    heartbeatEveryMs: 500,
    pollWaitSeconds: 2,
  });
  for (const [i, name] of cases.entries()) {
    nodeOf[name] = simulator.agents[i]!.nodeId;
    simulator.remediation(CASES[name], nodeOf[name]);
  }
  for (const name of cases) await simulator.reportCondition(nodeOf[name], 'GpuXidError', true, 'xid-79');
});

afterAll(async () => {
  await simulator?.close();
  await stop?.();
});

/** The result of the node's remediation's run (its one remediation, requested by its report). */
const result = async (name: Case) => operationRunResult(h, (await operation(name)).id);
const attempts = (event: { data: Record<string, unknown> } | undefined) =>
  (event!.data.attempts as { action: string; outcome: string; refuseReason?: string | null }[]).map((a) => [
    a.action,
    a.outcome,
    a.refuseReason ?? null,
  ]);
const node = async (name: Case) => (await call(h, 'GET', `/v1/nodes/${nodeOf[name]}`)).body;
async function operation(name: Case) {
  const [only, ...more] = await remediationsOf(h, nodeOf[name]);
  expect(more).toEqual([]);
  return only;
}

describe('the remediation ladder climbs', () => {
  it('reset-accelerator refused, reboot attempted at once and clears: succeeded, no escalation', async () => {
    expect(await result('climbs')).toBe('succeeded');
    await recordHistory(h.temporal, remediationWorkflowId(nodeOf.climbs), 'remediation-climb');
    const events = await eventsOf(h, nodeOf.climbs, 'node.remediation.');
    expect(events.map((e) => [e.type, e.data.action ?? null])).toEqual([
      ['node.remediation.attempted', 'reset-accelerator'],
      ['node.remediation.attempted', 'reboot'],
      ['node.remediation.succeeded', null],
    ]);
    expect(attempts(events[2])).toEqual([
      ['reset-accelerator', 'refused', 'reset-accelerator failed (simulated)'],
      ['reboot', 'cleared', null],
    ]);
    // The refused rung did not wait out its minute-long attempt.
    const [first, second] = events.map((e) => Date.parse((e as unknown as { createdAt: string }).createdAt));
    expect(second! - first!).toBeLessThan(30_000);
    expect(await node('climbs')).toMatchObject({ maintenance: false, noScheduleReasons: [] });
    expect(await operation('climbs')).toMatchObject({ status: 'succeeded' });
  });

  it('both rungs refused: maintenance, one escalation naming both with their refusal text', async () => {
    expect(await result('refusesAll')).toBe('escalated');
    const escalated = await eventsOf(h, nodeOf.refusesAll, 'node.remediation.escalated');
    expect(escalated).toHaveLength(1);
    expect(attempts(escalated[0])).toEqual([
      ['reset-accelerator', 'refused', 'reset-accelerator failed (simulated)'],
      ['reboot', 'refused', 'reboot failed (simulated)'],
    ]);
    expect(await node('refusesAll')).toMatchObject({ maintenance: true });
    expect(await operation('refusesAll')).toMatchObject({ status: 'failed' });
    expect(await eventsOf(h, nodeOf.refusesAll, 'node.remediation.succeeded')).toEqual([]);
  });

  it('acked twice without the condition clearing: escalated, each attempt acked', async () => {
    expect(await result('acksWithoutClearing')).toBe('escalated');
    const [escalated] = await eventsOf(h, nodeOf.acksWithoutClearing, 'node.remediation.escalated');
    expect(attempts(escalated)).toEqual([
      ['reset-accelerator', 'acked', null],
      ['reboot', 'acked', null],
    ]);
    expect((await remediateCommands(h, nodeOf.acksWithoutClearing)).map((c) => c.status)).toEqual([
      'acked',
      'acked',
    ]);
    expect(await node('acksWithoutClearing')).toMatchObject({ maintenance: true });
  });

  it('never answered: each attempt timed out after the pool’s attempt timeout, commands withdrawn', async () => {
    expect(await result('silent')).toBe('escalated');
    const events = await eventsOf(h, nodeOf.silent, 'node.remediation.');
    expect(attempts(events.at(-1))).toEqual([
      ['reset-accelerator', 'timed-out', null],
      ['reboot', 'timed-out', null],
    ]);
    const [first, second] = events.map((e) => Date.parse((e as unknown as { createdAt: string }).createdAt));
    expect(second! - first!).toBeGreaterThanOrEqual(3_000);
    expect((await remediateCommands(h, nodeOf.silent)).map((c) => c.status)).toEqual([
      'cancelled',
      'cancelled',
    ]);
  });

  it('a pool’s own ladder and attempt timeout: refused rungs do not count, two that ran escalate', async () => {
    expect(await result('ownLadder')).toBe('escalated');
    const events = await eventsOf(h, nodeOf.ownLadder, 'node.remediation.');
    expect(attempts(events.at(-1))).toEqual([
      ['drain-gpu', 'refused', 'drain-gpu failed (simulated)'],
      ['reset-accelerator', 'acked', null],
      ['reboot', 'timed-out', null],
    ]);
    // power-cycle, which would have cleared it, was never sent: two attempts ran without clearing.
    expect((await remediateCommands(h, nodeOf.ownLadder)).map((c) => c.action)).toEqual(
      OWN_LADDER.slice(0, 3),
    );
    const [, second, third] = events.map((e) =>
      Date.parse((e as unknown as { createdAt: string }).createdAt),
    );
    expect(third! - second!).toBeGreaterThanOrEqual(1_000);
    expect((await operation('ownLadder')).result).toMatchObject({
      condition: 'GpuXidError',
      automatic: true,
      plan: { ladder: OWN_LADDER, attemptTimeoutMs: 1_000, healthyAfterMs: 60_000 },
    });
  });
});
