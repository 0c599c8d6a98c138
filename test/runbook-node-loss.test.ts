import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LivenessSettings } from '../domain/liveness';
import { allocations } from '../db/schema';
import { ensureLivenessSweep } from '../workflows/liveness-client';
import { useAgentBench, type RunningAgent } from './agent/agent-process';
import { createToken } from './support/agents';
import { heartbeat, placeAllocation, pollCommands } from './support/builders';
import { readNode } from './support/cli';
import { allocate, call, eventsOf, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { bash, operatorEnv, sectionedBlocks, type Run } from './support/runbook';

/**
 * The node-loss runbook, run as an operator would: for each of its three cases, the ```bash blocks
 * of that case, as written, in a bash with `set -euo pipefail`, against a real API, worker and
 * liveness controller, with real `drydock-agent` processes as the machines. Between the blocks the
 * test does what the world does meanwhile: a machine loses power and comes back, an owner releases
 * its allocation, a machine joins again with the token the operator handed over.
 */

const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/node-loss.md', import.meta.url));

/** Liveness in seconds instead of minutes; the outage threshold out of reach (no grace period). */
const SETTINGS: LivenessSettings = {
  sweepEveryMs: 250,
  leaseMs: 4_000,
  sessionTimeoutMs: 2_000,
  outageMs: 10 * 60_000,
  graceMs: 60_000,
};

const h = useHarness({ heartbeats: { flushEveryMs: 200, sessionTimeoutMs: SETTINGS.sessionTimeoutMs } });
const bench = useAgentBench(h);

const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-runbook-node-loss-'));
const sweepWorkflowId = () => `liveness-${h.taskQueue}`;

afterAll(async () => {
  await h.temporal.workflow
    .getHandle(sweepWorkflowId())
    .terminate('the file is done')
    .catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

const markdown = readFileSync(RUNBOOK, 'utf8');
const blocks = sectionedBlocks(markdown);
const runnable = blocks.filter((b) => b.lang === 'bash');

/** The bash blocks of these sections, in the page's order, as one script; each section has one. */
function script(sections: readonly string[]): string {
  const chosen = runnable.filter((b) => sections.includes(b.section));
  for (const section of sections) {
    expect(
      chosen.some((b) => b.section === section),
      `a bash block under "${section}"`,
    ).toBe(true);
  }
  return ['set -euo pipefail', ...chosen.map((b) => `# runbook line ${b.line}\n${b.code}`)].join('\n');
}

/** Runs the blocks of `sections` in a fresh shell, as the runbook says after a failure or a pause. */
async function operator(
  node: string,
  sections: readonly string[],
  meanwhile?: (ended: () => Run | undefined) => Promise<void>,
) {
  const env = operatorEnv(dir, {
    DRYDOCK_API: bench.api,
    DRYDOCK_TOKEN: h.operatorKey,
    NODE: node,
    CHANGE: 'INC-4711',
  });
  const text = script(sections);
  writeFileSync(joinPath(dir, `runbook-${node}-${sections.length}.sh`), text);
  const running = bash(text, env, dir);
  let ended: Run | undefined;
  void running.then((run) => (ended = run));
  if (meanwhile) await meanwhile(() => ended);
  const result = await running;
  expect(result.code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
  return result;
}

/** What the owner does while the drain waits for its allocation: release it. */
function ownerReleases(nodeId: string, allocationId: string) {
  return async (ended: () => Run | undefined) => {
    await eventually(async () => {
      const run = ended();
      if (run) throw new Error(`the runbook ended early:\n${run.stdout}\n${run.stderr}`);
      const ops = await call(h, 'GET', `/v1/operations?nodeId=${nodeId}`);
      const drain = ops.body.items.find((op: { kind: string }) => op.kind === 'drain');
      if (!drain) return undefined;
      return (await call(h, 'GET', `/v1/operations/${drain.id}`)).body.progress?.phase === 'waiting';
    }, 30_000);
    expect((await call(h, 'POST', `/v1/allocations/${allocationId}/release`)).status).toBe(200);
  };
}

interface Machine {
  dir: string;
  hostname: string;
  nodeId: string;
  credential: string;
}

/** `drydock-agent join` on the machine with a token, as its hostname, with the test inventory or none. */
function agentJoin(machine: Pick<Machine, 'dir' | 'hostname'>, token: string, flags: string[] = []) {
  const args = [
    'join',
    ...flags,
    '--api',
    bench.api,
    '--data-dir',
    machine.dir,
    '--hostname',
    machine.hostname,
  ];
  return bench.agent(args, { DRYDOCK_JOIN_TOKEN: token });
}

/** A machine joined with `drydock-agent join` and a token of `poolId` carrying `labels`. */
async function joinMachine(
  poolId: string,
  hostname: string,
  labels: Record<string, string>,
  inventory?: string,
): Promise<Machine> {
  const token = await createToken(h, { poolId, labels });
  const data = bench.dataDir();
  const joined = await agentJoin(
    { dir: data, hostname },
    token.secret,
    inventory ? ['--inventory', inventory] : [],
  );
  if (joined.code !== 0) throw new Error(`join failed: ${joined.stderr}`);
  const identity = JSON.parse(readFileSync(joinPath(data, 'identity.json'), 'utf8'));
  return { dir: data, hostname, nodeId: identity.nodeId, credential: identity.credential };
}

/** `drydock-agent run` on the machine, once it is connected. */
async function run(data: string): Promise<RunningAgent> {
  const agent = bench.spawnAgent(['run', '--data-dir', data, '--heartbeat-every', '300ms']);
  await agent.waitForLog(/connected to .* as node_/, 20_000);
  return agent;
}

/** A machine losing power: no goodbye. */
async function powerOff(agent: RunningAgent): Promise<void> {
  agent.child.kill('SIGKILL');
  await agent.exited;
}

/** The node's operator labels and taints, as the runbook compares them. */
async function carried(nodeId: string) {
  const node = await readNode(h, nodeId);
  return {
    labels: Object.fromEntries(
      node.labels
        .filter((l: { source: string }) => l.source === 'operator')
        .map((l: { key: string; value: string }) => [l.key, l.value]),
    ),
    taints: node.noScheduleReasons.filter((r: string) => r.startsWith('taint:')).sort(),
  };
}

const INVENTORY = joinPath(dir, 'inventory.json');
writeFileSync(
  INVENTORY,
  JSON.stringify({
    accelerators: [
      { model: 'H100', serial: 'h100-0' },
      { model: 'H100', serial: 'h100-1' },
    ],
    storageRoots: [{ path: '/data', bytes: 1_000_000_000 }],
  }),
);

/** A node of another pool, beating all along: nothing the runbook does may touch it. */
let bystander: { machine: Machine; allocation: string; before: unknown; events: number };

const bystanderNow = async () => {
  // Its times move with every heartbeat; everything else must stay as it was.
  const {
    lastSeenAt: _seen,
    updatedAt: _updated,
    session,
    ...node
  } = await readNode(h, bystander.machine.nodeId);
  return { ...node, connectivity: session.connectivity };
};

async function expectBystanderUntouched(): Promise<void> {
  expect(await bystanderNow()).toEqual(bystander.before);
  expect(await eventsOf(h, bystander.machine.nodeId)).toHaveLength(bystander.events);
  const [held] = await h.db.select().from(allocations).where(eq(allocations.id, bystander.allocation));
  expect(held?.releasedAt).toBeNull();
  expect((await heartbeat(h, bystander.machine.credential)).status).toBe(200);
}

beforeAll(async () => {
  await seedPool(h, { id: 'pool-other', tenantId: 'acme' });
  await seedPool(h, { id: 'pool-east', tenantId: 'acme' });
  // Provider pools lose nodes: unreachable, then lost 2 s later.
  await seedPool(h, { id: 'pool-cloud', tenantId: 'acme', kind: 'provider', policy: { lostAfter: '2s' } });
  await ensureLivenessSweep(h.temporal, h.taskQueue, { settings: SETTINGS, workflowId: sweepWorkflowId() });
  const machine = await joinMachine('pool-other', 'gpu-a1-01', { rack: 'a1' });
  await run(machine.dir);
  const allocation = await allocate(h, machine.nodeId, 'acme');
  await eventually(async () => (await readNode(h, machine.nodeId)).connectivity === 'connected');
  bystander = { machine, allocation, before: undefined, events: 0 };
  bystander.before = await bystanderNow();
  bystander.events = (await eventsOf(h, machine.nodeId)).length;
}, 60_000);

describe('docs/runbooks/node-loss.md', () => {
  it('has its cases and keeps what runs on the machines out of bash blocks', () => {
    const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([
      'Before you start',
      'Which case you are in',
      'Case 1: a temporary outage',
      'Case 2: a lost credential',
      'Case 3: a rebuild',
      'Replace the node record',
      'When to decommission instead',
    ]);
    for (const block of runnable) expect(block.code, `line ${block.line}`).not.toMatch(/drydock-agent/);
    expect(markdown).toContain('drydock-agent join --reset --yes --api');
    expect(markdown).toMatch(/\[decommission\.md\]\(decommission\.md\)/);
    const all = runnable.map((b) => b.code).join('\n');
    expect(all).toContain('drydock nodes revoke-identity "$NODE"');
    expect(all).toContain('drydock nodes delete "$NODE" --yes');
    expect(all).not.toMatch(/drydock nodes (purge|decommission)/);
  });

  it('case 1, an outage: unreachable, lost, held; back by itself with its identity, then uncordoned', async () => {
    const machine = await joinMachine('pool-cloud', 'vm-c1-07', { rack: 'c1' });
    const agent = await run(machine.dir);
    const allocation = await allocate(h, machine.nodeId, 'acme');
    const joined = await readNode(h, machine.nodeId);

    // The power goes: no goodbye; the liveness controller ages the node into unreachable, then lost.
    await powerOff(agent);
    await eventually(async () => (await readNode(h, machine.nodeId)).liveness === 'lost', 20_000, 100);

    const held = await operator(machine.nodeId, [
      'Before you start',
      'Which case you are in',
      'Hold it while you look',
    ]);
    // What the operator read to tell the case.
    expect(held.stdout).toMatch(/^Liveness:\s+lost \(last seen /m);
    expect(held.stdout).toMatch(/^Reasons:\s+unreachable$/m);
    expect(held.stdout).toMatch(/node\.unreachable\s+system:liveness/);
    expect(held.stdout).toMatch(/node\.lost\s+system:liveness/);
    expect(held.stdout).toContain(allocation);
    // Held: cordoned, out of placement, its allocation kept (nothing is released by silence).
    expect(await readNode(h, machine.nodeId)).toMatchObject({
      liveness: 'lost',
      connectivity: 'disconnected',
      cordoned: true,
      noScheduleReasons: ['unreachable'],
    });
    const refused = await placeAllocation(h, machine.nodeId);
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'NOT_SCHEDULABLE' } } });
    expect(refused.body.error.details.reasons).toContain('unreachable');

    // The machine comes back with its data directory, so with its identity.
    const back = await run(machine.dir);
    const returned = await operator(machine.nodeId, [
      'Before you start',
      'When it comes back',
      'Put it back in service',
    ]);
    expect(returned.stdout).toMatch(/node\.connected\s+node:/);

    // The same node, alive, with the same identity: nothing to re-enroll; back in service.
    const node = await readNode(h, machine.nodeId);
    expect(node).toMatchObject({
      id: machine.nodeId,
      provisionState: 'adopted',
      liveness: 'alive',
      connectivity: 'connected',
      cordoned: false,
      noScheduleReasons: [],
      conditions: [],
      identityGeneration: joined.identityGeneration,
      labels: joined.labels,
    });
    expect((await heartbeat(h, machine.credential)).status).toBe(200);
    expect(back.child.exitCode).toBeNull();
    // Its allocation ran through the outage, never released.
    const [kept] = await h.db.select().from(allocations).where(eq(allocations.id, allocation));
    expect(kept?.releasedAt).toBeNull();
    // What happened, in order: its boot said, silence, unreachable, lost, held, back (the same
    // boot: no second node.booted), uncordoned. No revocation.
    const types = (await eventsOf(h, machine.nodeId))
      .map((e) => e.type)
      .filter((t) => !t.startsWith('allocation.'));
    expect(types.slice(types.indexOf('node.adopted') + 1)).toEqual([
      'node.booted',
      'node.connected',
      'node.disconnected',
      'node.unreachable',
      'node.lost',
      'node.cordoned',
      'node.connected',
      'node.uncordoned',
    ]);
    await expectBystanderUntouched();
  }, 90_000);

  it('case 2, a leaked credential: revoked (401, purge 409), the old record deleted, the machine joined again with its labels and taints', async () => {
    const machine = await joinMachine('pool-east', 'gpu-b8-02', { rack: 'b8', team: 'ml' }, INVENTORY);
    const agent = await run(machine.dir);
    const allocation = await allocate(h, machine.nodeId, 'acme');
    expect(
      (await call(h, 'POST', `/v1/nodes/${machine.nodeId}/label`, { body: { set: { owner: 'ml-infra' } } }))
        .status,
    ).toBe(200);
    expect(
      (
        await call(h, 'POST', `/v1/nodes/${machine.nodeId}/taint`, {
          body: { add: ['dedicated=acme', 'nvlink-check'] },
        })
      ).status,
    ).toBe(200);
    const old = await carried(machine.nodeId);
    expect(old).toEqual({
      labels: { rack: 'b8', team: 'ml', owner: 'ml-infra' },
      taints: ['taint:dedicated=acme', 'taint:nvlink-check'],
    });

    // The operator knows the case from outside (the files were seen elsewhere): straight to the revoke.
    const revoking = await operator(machine.nodeId, ['Before you start', 'Revoke the identity']);
    expect(revoking.stdout).toMatch(
      /: identity revoked, 1 certificate revoked, identity generation 2, version /,
    );
    // The old credential is dead: 401 on every agent call; the real agent's run ends with exit 3.
    expect(await eventually(async () => agent.child.exitCode ?? undefined, 10_000)).toBe(3);
    expect((await heartbeat(h, machine.credential)).status).toBe(401);
    expect((await pollCommands(h, machine.credential)).status).toBe(401);
    const revoked = await readNode(h, machine.nodeId);
    expect(revoked).toMatchObject({ identityGeneration: 2, cordoned: true, provisionState: 'adopted' });
    expect(await eventsOf(h, machine.nodeId, 'security.node.identity-revoked')).toMatchObject([
      { reason: 'credential leaked (INC-4711)' },
    ]);
    // A purge could never be acknowledged now: refused, and nothing changes.
    const purge = await call(h, 'POST', `/v1/nodes/${machine.nodeId}/purge`, {
      body: { confirm: true, reason: 'leak' },
    });
    expect(purge).toMatchObject({
      status: 409,
      body: { error: { code: 'INVALID_STATE', details: { instead: ['delete', 'decommission'] } } },
    });
    expect(await readNode(h, machine.nodeId)).toMatchObject({
      provisionState: 'adopted',
      identityGeneration: 2,
    });
    expect(await eventsOf(h, machine.nodeId, 'node.purge')).toEqual([]);

    // Then the record is replaced; on the machine, which kept its disk, the join takes --reset --yes.
    const newId = await replaceRecord(machine, allocation, {
      diagnose: false,
      join: ['--reset', '--yes', '--inventory', INVENTORY],
    });
    expect(readdirSync(machine.dir).filter((f) => f.startsWith('identity.json.reset-'))).toHaveLength(1);
    await expectReplaced(machine, newId, old, allocation);
  }, 120_000);

  it('case 3, a rebuild: the old record drained and deleted (a tombstone), the rebuilt machine joined as a new node with its labels and taints', async () => {
    const machine = await joinMachine('pool-east', 'gpu-b7-03', { rack: 'b7' }, INVENTORY);
    const agent = await run(machine.dir);
    const allocation = await allocate(h, machine.nodeId, 'acme');
    expect(
      (await call(h, 'POST', `/v1/nodes/${machine.nodeId}/taint`, { body: { add: ['dedicated=acme'] } }))
        .status,
    ).toBe(200);
    const old = await carried(machine.nodeId);

    // The machine goes down for its reinstall; its disk, with the identity, is replaced.
    await powerOff(agent);
    rmSync(machine.dir, { recursive: true, force: true });

    // The rebuilt machine has an empty data directory: no --reset.
    const newId = await replaceRecord(machine, allocation, {
      diagnose: true,
      join: ['--inventory', INVENTORY],
    });
    await expectReplaced(machine, newId, old, allocation);
  }, 120_000);
});

/**
 * "Replace the node record" as the operator and the machine run it: the record, the drain (its
 * owner releases the allocation meanwhile) and delete, the token; on the machine `join` with the
 * token (and `join` flags) and `run`; then the check. Returns the new node's id, as `join` printed it.
 */
async function replaceRecord(
  machine: Machine,
  allocation: string,
  options: { diagnose: boolean; join: string[] },
): Promise<string> {
  const replacing = await operator(
    machine.nodeId,
    [
      'Before you start',
      ...(options.diagnose ? ['Which case you are in'] : []),
      'Record the old node',
      'Take the old node out and delete it',
      'Make a join token that carries its labels',
    ],
    ownerReleases(machine.nodeId, allocation),
  );
  expect(replacing.stdout).toContain(`deleted ${machine.nodeId}\n`);
  expect(replacing.stdout).toMatch(new RegExp(`^join token jt_[0-9a-z]{26} for ${machine.hostname}$`, 'm'));
  const token = JSON.parse(readFileSync(joinPath(dir, `node-loss-${machine.nodeId}`, 'token.json'), 'utf8'));

  const joined = await agentJoin(machine, token.secret, options.join);
  expect(joined.code, joined.stderr).toBe(0);
  const newId = /^joined as (node_[0-9a-z]{26}) \(adopted\)$/m.exec(joined.stdout)?.[1];
  if (!newId) throw new Error(`no node id in the join's output:\n${joined.stdout}`);
  await run(machine.dir);

  const checked = await operator(machine.nodeId, [
    'Before you start',
    'Check the new node and carry its taints',
  ]);
  expect(checked.stdout).toContain(`${machine.nodeId} (${machine.hostname}) replaced by ${newId}, INC-4711`);
  return newId;
}

/** After "Replace the node record": the old node a tombstone, the new one adopted with what it carried. */
async function expectReplaced(
  machine: Machine,
  newId: string,
  old: Awaited<ReturnType<typeof carried>>,
  allocation: string,
): Promise<void> {
  // The old node: deleted once, a tombstone still readable by id with its history; its
  // credential refused; listed only with include-deleted; no control applies any more.
  const tomb = await readNode(h, machine.nodeId);
  expect(tomb.deletedAt).toEqual(expect.any(String));
  expect(tomb.labels.filter((l: { source: string }) => l.source === 'operator')).toHaveLength(
    Object.keys(old.labels).length,
  );
  expect(await eventsOf(h, machine.nodeId, 'node.deleted')).toMatchObject([
    { reason: 'node loss: replaced by a new node (INC-4711)' },
  ]);
  expect((await eventsOf(h, machine.nodeId, 'node.')).map((e) => e.type)).toEqual(
    expect.arrayContaining([
      'node.adopted',
      'node.connected',
      'node.draining',
      'node.drained',
      'node.deleted',
    ]),
  );
  expect((await heartbeat(h, machine.credential)).status).toBe(401);
  const listed = await call(h, 'GET', '/v1/nodes?poolId=pool-east');
  expect(listed.body.items.map((n: { id: string }) => n.id)).not.toContain(machine.nodeId);
  expect(listed.body.items.map((n: { id: string }) => n.id)).toContain(newId);
  const withDeleted = await call(h, 'GET', '/v1/nodes?poolId=pool-east&includeDeleted=true');
  expect(withDeleted.body.items.map((n: { id: string }) => n.id)).toContain(machine.nodeId);
  expect(await call(h, 'POST', `/v1/nodes/${machine.nodeId}/uncordon`, { body: {} })).toMatchObject({
    status: 409,
    body: { error: { code: 'INVALID_STATE' } },
  });
  // Its allocation released by its owner before the delete, not by force.
  const [released] = await h.db.select().from(allocations).where(eq(allocations.id, allocation));
  expect(released?.releasedAt).not.toBeNull();
  expect(released?.releasedBy).not.toMatch(/^system:/);

  // The new node: the same machine and pool, a new identity, adopted and connected, carrying the
  // old node's operator labels and taints, with its inventory labels from its own join.
  const node = await readNode(h, newId);
  expect(node).toMatchObject({
    hostname: machine.hostname,
    poolId: 'pool-east',
    provisionState: 'adopted',
    liveness: 'alive',
    connectivity: 'connected',
    cordoned: false,
    deletedAt: null,
  });
  expect(await carried(newId)).toEqual(old);
  expect(node.labels).toEqual(
    expect.arrayContaining([
      { key: 'gpu.model', value: 'H100', source: 'inventory' },
      { key: 'gpu.count', value: '2', source: 'inventory' },
    ]),
  );
  const identity = JSON.parse(readFileSync(joinPath(machine.dir, 'identity.json'), 'utf8'));
  expect(identity.nodeId).toBe(newId);
  expect((await heartbeat(h, identity.credential)).status).toBe(200);
  // The token: one join, used.
  const tokens = await call(h, 'GET', '/v1/tokens');
  const rejoin = tokens.body.items.find((t: { description: string | null }) =>
    t.description?.startsWith(`rejoin ${machine.hostname} `),
  );
  expect(rejoin).toMatchObject({ uses: 1, maxUses: 1, poolId: 'pool-east' });
  await expectBystanderUntouched();
}
