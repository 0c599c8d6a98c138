import { chmodSync, cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeCredentials } from '../../db/schema';
import { createToken } from '../support/agents';
import { heartbeat } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { joinedMachine, runMachine, useAgentBench } from '../agent/agent-process';

const h = useHarness({ worker: false });
const bench = useAgentBench(h);

const credentialIn = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'identity.json'), 'utf8')) as { credential: string }).credential;

describe("a node's identity with the real agent", () => {
  it('renews its credential two thirds into a short lifetime, again and again; stopped past its end, it is told to join again', async () => {
    await seedPool(h, { id: 'pool-short', tenantId: 'acme', policy: { credentialTtl: '12s' } });
    const machine = await joinedMachine(h, bench, 'pool-short');
    const agent = await runMachine(bench, machine);
    await agent.waitForLog(/node credential renewed; the new one expires at/, 20_000);
    const first = credentialIn(machine.dir);
    expect(first).not.toBe(machine.credential);
    // The new one in use, the one it renewed ends.
    await eventually(async () => (await heartbeat(h, machine.credential)).status === 401);
    const mark = agent.stderr().length;
    await agent.waitForLog(/node credential renewed/, 20_000, mark);
    const second = credentialIn(machine.dir);
    expect(second).not.toBe(first);
    expect((await call(h, 'GET', `/v1/nodes/${machine.nodeId}`)).body.connectivity).toBe('connected');

    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    // Away past its end: the credential it holds expires by itself.
    const expired = await eventually(async () => {
      const reply = await heartbeat(h, second);
      return reply.status === 401 && reply.body;
    }, 20_000);
    expect(expired.error.code).toBe('CREDENTIAL_EXPIRED');
    const again = bench.spawnAgent(['run', '--data-dir', machine.dir, '--heartbeat-every', '300ms']);
    expect(await again.exited).toBe(3);
    expect(again.stderr()).toMatch(
      /the node identity is no longer valid \(the node credential of node_\w+ expired at/,
    );
    expect(again.stderr()).toMatch(/join again with 'drydock-agent join --reset --yes'/);
  }, 90_000);

  it('refuses to run with a node key others may read, as ssh refuses such an identity file', async () => {
    const machine = await joinedMachine(h, bench, 'pool-key-mode');
    chmodSync(join(machine.dir, 'node.key'), 0o644);
    const run = await bench.agent(['run', '--data-dir', machine.dir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `UNPROTECTED PRIVATE KEY FILE ${join(machine.dir, 'node.key')}: permissions 0644`,
    );
    expect(run.stderr).toContain('chmod 600');
    expect(run.stderr).not.toContain('PRIVATE KEY-----');
    expect((await call(h, 'GET', `/v1/nodes/${machine.nodeId}`)).body.connectivity).toBe('disconnected');
  });

  it('restarts are new runs, not a copy: no duplicate-session', async () => {
    const machine = await joinedMachine(h, bench, 'pool-restarts');
    for (let i = 0; i < 3; i++) {
      const agent = await runMachine(bench, machine);
      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
    }
    expect(await eventsOf(h, machine.nodeId, 'security.node.duplicate-session')).toEqual([]);
    expect((await call(h, 'GET', `/v1/nodes/${machine.nodeId}`)).body.noScheduleReasons).toEqual([]);
  }, 60_000);

  it('one identity on two machines (a copied disk) is quarantined; the real machine joins again with --reset --yes', async () => {
    const machine = await joinedMachine(h, bench, 'pool-clone');
    const clone = bench.dataDir();
    cpSync(machine.dir, clone, { recursive: true });
    const real = await runMachine(bench, machine);
    const copy = await runMachine(bench, machine, clone);
    expect(await real.exited).toBe(3);
    expect(await copy.exited).toBe(3);
    for (const agent of [real, copy]) expect(agent.stderr()).toMatch(/the node identity is no longer valid/);

    const alternations = await eventsOf(h, machine.nodeId, 'security.node.duplicate-session');
    expect(alternations.length).toBeGreaterThanOrEqual(4);
    expect(new Set(alternations.map((e: { actor: string }) => e.actor))).toEqual(
      new Set(['system:identity']),
    );
    const quarantined = await eventsOf(h, machine.nodeId, 'security.node.quarantined');
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]!.data).toMatchObject({ alternations: 4, revokedCredentials: 1 });
    const node = (await call(h, 'GET', `/v1/nodes/${machine.nodeId}`)).body;
    expect(node.noScheduleReasons).toContain('quarantined');
    const credentials = await h.db
      .select()
      .from(nodeCredentials)
      .where(eq(nodeCredentials.nodeId, machine.nodeId));
    expect(credentials.map((c) => c.revokedReason)).toEqual(['duplicate-identity']);

    const token = await createToken(h, { poolId: 'pool-clone' });
    const rejoin = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--token',
      token.secret,
      '--data-dir',
      machine.dir,
      '--reset',
      '--yes',
      '--json',
    ]);
    expect(rejoin.code, rejoin.stderr).toBe(0);
    const fresh = JSON.parse(rejoin.stdout).nodeId as string;
    expect(fresh).not.toBe(machine.nodeId);
    const back = await runMachine(bench, { ...machine, nodeId: fresh });
    expect((await call(h, 'GET', `/v1/nodes/${fresh}`)).body.connectivity).toBe('connected');
    back.child.kill('SIGTERM');
    expect(await back.exited).toBe(0);
    // The quarantined node stays as it was, for the operator to delete once the copy is found.
    expect((await call(h, 'GET', `/v1/nodes/${machine.nodeId}`)).body.noScheduleReasons).toContain(
      'quarantined',
    );
  }, 90_000);
});
