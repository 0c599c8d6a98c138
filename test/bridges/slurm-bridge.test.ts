import type { Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listen } from '../../api/server';
import { loadConfig } from '../../config';
import { startSlurm, type SlurmCluster } from '../../scripts/services/slurm';
import { observedAllocations, slurmHook, startBridge, type BridgeProcess } from '../support/bridge';
import { operationWhen } from '../support/builders';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

// The Slurm bridge end to end: a real slurmctld, slurmd and munged, the bridge as its own process
// (bin/drydock-bridge.mjs) against the API over HTTP, slurmctld's hooks running bin/drydock-slurm-hook.

const h = useHarness();

const CLUSTER = 'drybridge';
const SOURCE = `slurm:${CLUSTER}`;
const NODE1 = 'gpu-c3-01';
const NODE2 = 'gpu-c3-02';
/** A Slurm node with no Drydock node of its name. */
const STRANGER = 'gpu-c3-09';
const POOL = 'pool-slurm';

let slurm: SlurmCluster;
let server: Server;
let port: number;
let api: string;
let dir: string;
let spool: string;
let configFile: string;
let token: string;
let bridge: BridgeProcess;
let node1: string;
let node2: string;

const sbatch = async (args: string[]) =>
  (await slurm.slurm('sbatch', ['--parsable', ...args, '--wrap', 'sleep 600'])).trim().split(';')[0]!;
/** What `sinfo` itself calls the node's state: draining, drained, idle, mixed, … */
const sinfoWord = async (name: string) =>
  (await slurm.slurm('sinfo', ['--noheader', '--nodes', name, '--format=%T'])).trim();
const slurmNode = async (name: string) => (await slurm.nodeStates()).find((n) => n.name === name)!;
const squeueJob = async (id: string) =>
  (
    await slurm.slurmJson<{ jobs: { job_id: number; job_state: string; restart_cnt: number }[] }>('squeue')
  ).jobs.find((j) => String(j.job_id) === id);
const { live, of: allocationsOf } = observedAllocations(h, SOURCE);
/** Polls `check` (30 s at most); a failure quotes what the bridge logged. */
const until = <T>(check: () => Promise<T | undefined | false>, ms?: number) => bridge.until(check, ms);
const nodeView = async (nodeId: string) => (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;

function runBridge() {
  // A short sweep: what only the sweep sees (an administrator's drain, a node DOWN) shows sooner.
  bridge = startBridge({
    api,
    token,
    argv: ['slurm', '--cluster', CLUSTER, '--spool', spool, '--config', configFile, '--sweep-every', '3s'],
    env: slurm.env,
  });
  return bridge;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'drydock-slurm-bridge-'));
  spool = join(dir, 'spool');
  const hook = slurmHook(dir, spool);
  slurm = await startSlurm({
    home: loadConfig().DRYDOCK_HOME,
    clusterName: CLUSTER,
    nodes: [
      { name: NODE1, cpus: 4 },
      { name: NODE2, cpus: 4 },
      { name: STRANGER, cpus: 2 },
    ],
    epilogSlurmctld: hook,
    prologSlurmctld: hook,
  });
  const listening = await listen(h.deps, 0);
  server = listening.server;
  port = listening.port;
  api = `http://127.0.0.1:${port}`;
  const key = await call(h, 'POST', '/v1/keys', { body: { name: 'slurm-bridge' } });
  token = key.body.secret as string;
  await seedPool(h, { id: POOL, tenantId: 'acme' });
  node1 = await seedNode(h, { poolId: POOL, hostname: NODE1 });
  node2 = await seedNode(h, { poolId: POOL, hostname: NODE2 });
  configFile = join(dir, 'bridge.yaml');
  writeFileSync(configFile, 'tenants:\n  research: research-team\nend:\n  default: requeue\n');
  runBridge();
  // Started (a slow start on a busy machine is no test's business): it has reported both nodes.
  const reported = async (nodeId: string) => (await nodeView(nodeId)).schedulers?.[0];
  await eventually(async () => (await reported(node1)) && (await reported(node2)), 120_000, 100);
}, 240_000);

afterAll(async () => {
  await bridge?.stop();
  await slurm?.stop();
  if (server) await closeServer(server);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Slurm bridge against a real Slurm', () => {
  let requeueable = '';
  let plain = '';

  it('reports a Slurm node Drydock does not know, and records nothing of it', async () => {
    const said = await bridge.logged((l) => String(l.message).includes('no Drydock node of that hostname'));
    expect(said).toMatchObject({ level: 'warn', message: expect.stringContaining(STRANGER) });
    const job = await sbatch(['-w', STRANGER]);
    await until(async () => (await squeueJob(job))?.job_state === 'RUNNING');
    // A job on a known node, started after: once it is recorded, a pass has seen both running.
    const known = await sbatch(['-w', NODE1]);
    await until(async () => (await allocationsOf(known)).length === 1);
    expect(await allocationsOf(job)).toEqual([]);
    await slurm.slurm('scancel', [job, known]);
    await until(async () => (await live(node1)).length === 0);
    expect((await call(h, 'GET', `/v1/nodes?hostname=${STRANGER}`)).body.items).toEqual([]);
  });

  it('records each running job as an observed allocation: its tenant from the account, its end from the limit', async () => {
    requeueable = await sbatch(['-w', NODE1, '-A', 'research', '-t', '10', '--requeue']);
    plain = await sbatch(['-w', NODE1, '--no-requeue']);
    const recorded = await until(async () => {
      const items = await live(node1);
      return items.length === 2 ? items : undefined;
    });
    const byJob = Object.fromEntries(recorded.map((a) => [a.externalId, a]));
    expect(byJob[requeueable]).toMatchObject({ tenantId: 'research-team', endsAt: expect.any(String) });
    // No account in the map: the node's own tenant. No limit (MaxTime=INFINITE): no end.
    expect(byJob[plain]).toMatchObject({ tenantId: 'acme', endsAt: null });
    const started = (
      await slurm.slurmJson<{ jobs: { job_id: number; start_time: number }[] }>('squeue')
    ).jobs.find((j) => String(j.job_id) === requeueable)!;
    expect(Date.parse(byJob[requeueable]!.endsAt!)).toBe((started.start_time + 10 * 60) * 1000);
    const observed = await eventsOf(h, node1, 'allocation.observed');
    const mine = observed.filter((e) => [plain, requeueable].includes(e.data.externalId as string));
    expect(mine).toHaveLength(2);
    expect(mine.every((e) => e.data.source === SOURCE && e.actor === 'key:slurm-bridge')).toBe(true);
    // Nothing on the other node, and the node's scheduler view is reported.
    expect(await live(node2)).toEqual([]);
    const view = await until(async () => (await nodeView(node1)).schedulers?.[0]);
    expect(view).toMatchObject({ source: SOURCE, name: NODE1, cordoned: false, down: false });
  });

  it('drains the node in Slurm when Drydock drains it, lists its jobs, and is drained once they end', async () => {
    const drain = await call(h, 'POST', `/v1/nodes/${node1}/drain`, { body: { reason: 'driver roll-out' } });
    expect(drain.status).toBe(202);
    const opId = drain.body.operation.id as string;
    await until(async () => (await slurmNode(NODE1)).reason === `drydock: driver roll-out (${opId})`);
    expect(await sinfoWord(NODE1)).toBe('draining');
    // Slurm places nothing new there: a job asked for that node waits.
    const waiting = await sbatch(['-w', NODE1]);
    const running = await operationWhen(h, opId, (op) => op.progress.waitingFor?.allocations === 2);
    expect(running.progress.waitingFor.items.map((i: { externalId: string }) => i.externalId).sort()).toEqual(
      [plain, requeueable].sort(),
    );
    expect((await squeueJob(waiting))?.job_state).toBe('PENDING');
    await slurm.slurm('scancel', [waiting]);

    const from = bridge.lines.length;
    await slurm.slurm('scancel', [requeueable, plain]);
    await operationWhen(h, opId, (op) => op.status === 'succeeded', 30_000);
    // slurmctld's epilog hook woke the pass that released them, not the sweep.
    const released = await bridge.logged((l) => Number(l.released) > 0, from);
    expect(released.wokenBy).toContain('scheduler');
    expect(await eventsOf(h, node1, 'node.drained')).toHaveLength(1);
    for (const job of [requeueable, plain]) {
      expect(await allocationsOf(job)).toMatchObject([{ live: false, releasedBy: 'key:slurm-bridge' }]);
    }
    await until(async () => (await sinfoWord(NODE1)) === 'drained');
    const view = await until(async () => {
      const reported = (await nodeView(node1)).schedulers?.[0];
      return reported?.cordonedByDrydock ? reported : undefined;
    });
    expect(view).toMatchObject({ cordoned: true, reason: `drydock: driver roll-out (${opId})` });
  });

  it('resumes the node in Slurm when Drydock uncordons it, and the moment Slurm cannot reach it after is no fault', async () => {
    // Drained, the node keeps its drain's reason in Slurm (sinfo -R says why and which operation).
    expect((await slurmNode(NODE1)).reason).toMatch(/^drydock: driver roll-out \(op_/);
    expect((await call(h, 'POST', `/v1/nodes/${node1}/uncordon`, { body: {} })).status).toBe(200);
    await until(async () => (await sinfoWord(NODE1)) === 'idle');
    expect((await slurmNode(NODE1)).reason).toBe('');
    // Slurm says NOT_RESPONDING for a moment after RESUME: reported as it is, it is not down.
    await until(async () => (await nodeView(node1)).schedulers?.[0]?.state === 'idle');
    const conditions = (await nodeView(node1)).conditions as { type: string }[];
    expect(conditions.filter((c) => c.type === 'SchedulerNodeDown')).toEqual([]);
  });

  it('past the deadline requeues the job that can be requeued and cancels the other, then releases them as Slurm ends them', async () => {
    const again = await sbatch(['-w', NODE1, '-A', 'research', '--requeue']);
    const once = await sbatch(['-w', NODE1, '--no-requeue']);
    await until(async () => (await live(node1)).length === 2);
    const drain = await call(h, 'POST', `/v1/nodes/${node1}/drain`, {
      body: { reason: 'firmware', deadline: '0s' },
    });
    const opId = drain.body.operation.id as string;
    await operationWhen(h, opId, (op) => op.status === 'succeeded', 30_000);
    const [requeued] = await allocationsOf(again);
    const [cancelled] = await allocationsOf(once);
    expect(requeued).toMatchObject({ live: false, ending: { action: 'requeue' } });
    expect(cancelled).toMatchObject({ live: false, ending: { action: 'cancel' } });
    // Requeued once, waiting in the queue (its node drained); the other is gone.
    expect(await squeueJob(again)).toMatchObject({ restart_cnt: 1 });
    expect((await squeueJob(again))!.job_state).toBe('PENDING');
    expect(['CANCELLED', undefined]).toContain((await squeueJob(once))?.job_state);
    const forced = await eventsOf(h, node1, 'allocation.force-released');
    expect(forced.map((e) => e.data.allocationId).sort()).toEqual([requeued!.id, cancelled!.id].sort());

    await slurm.slurm('scancel', [again]);
    await call(h, 'POST', `/v1/nodes/${node1}/uncordon`, { body: {} });
    await until(async () => (await sinfoWord(NODE1)) === 'idle');
  });

  it("leaves an administrator's own drain alone and shows the disagreement", async () => {
    await slurm.slurm('scontrol', ['update', `NodeName=${NODE2}`, 'State=DRAIN', 'Reason=bad fan']);
    const view = await until(async () => {
      const reported = (await nodeView(node2)).schedulers?.[0];
      return reported?.disagreement ? reported : undefined;
    });
    expect(view).toMatchObject({ cordoned: true, cordonedByDrydock: false, reason: 'bad fan' });
    // A Drydock cordon and uncordon on top of it: Slurm's drain and reason stay the admin's.
    await call(h, 'POST', `/v1/nodes/${node2}/cordon`, { body: {} });
    await until(async () => (await nodeView(node2)).schedulers?.[0]?.disagreement === null);
    await call(h, 'POST', `/v1/nodes/${node2}/uncordon`, { body: {} });
    await until(async () => (await nodeView(node2)).schedulers?.[0]?.disagreement);
    expect(await slurmNode(NODE2)).toMatchObject({ reason: 'bad fan' });
    expect((await slurmNode(NODE2)).state_flags).toContain('DRAIN');
    await slurm.slurm('scontrol', ['update', `NodeName=${NODE2}`, 'State=RESUME']);
    await until(async () => (await nodeView(node2)).schedulers?.[0]?.cordoned === false);
  });

  it('turns a node Slurm marks DOWN into condition SchedulerNodeDown, and RESUME clears it', async () => {
    await slurm.slurm('scontrol', ['update', `NodeName=${NODE2}`, 'State=DOWN', 'Reason=psu fault']);
    const condition = await until(async () =>
      (await nodeView(node2)).conditions.find(
        (c: { type: string; status: boolean }) => c.type === 'SchedulerNodeDown' && c.status,
      ),
    );
    expect(condition.reason).toContain('psu fault');
    await slurm.slurm('scontrol', ['update', `NodeName=${NODE2}`, 'State=RESUME']);
    await until(async () =>
      (await nodeView(node2)).conditions.find(
        (c: { type: string; status: boolean }) => c.type === 'SchedulerNodeDown' && !c.status,
      ),
    );
    await until(async () => (await sinfoWord(NODE2)) === 'idle');
  });

  it('finishes a drain across a slurmctld restart', async () => {
    const job = await sbatch(['-w', NODE1]);
    await until(async () => (await live(node1)).length === 1);
    const drain = await call(h, 'POST', `/v1/nodes/${node1}/drain`, { body: { reason: 'restart test' } });
    const opId = drain.body.operation.id as string;
    await until(async () => (await sinfoWord(NODE1)) === 'draining');
    // While slurmctld is away, squeue answers nothing: the bridge must not take that for "no jobs".
    const from = bridge.lines.length;
    await slurm.restartSlurmctld(async () => {
      await bridge.logged((l) => String(l.message).startsWith('pass failed'), from);
      expect(await live(node1)).toHaveLength(1);
    });
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.status).toBe('running');
    await slurm.slurm('scancel', [job]);
    await operationWhen(h, opId, (op) => op.status === 'succeeded', 30_000);
    await call(h, 'POST', `/v1/nodes/${node1}/uncordon`, { body: {} });
    await until(async () => (await sinfoWord(NODE1)) === 'idle');
  });

  it('killed mid forced release, a new bridge finishes it: each job requeued once, the drain done', async () => {
    const jobs = [
      await sbatch(['-w', NODE1, '--requeue']),
      await sbatch(['-w', NODE1, '--requeue']),
      await sbatch(['-w', NODE1, '--requeue']),
    ];
    await until(async () => (await live(node1)).length === 3);
    const drain = await call(h, 'POST', `/v1/nodes/${node1}/drain`, {
      body: { reason: 'kill test', deadline: '0s' },
    });
    const opId = drain.body.operation.id as string;
    await until(async () => (await eventsOf(h, node1, 'allocation.ending')).length > 0);
    await bridge.stop('SIGKILL');
    runBridge();
    await operationWhen(h, opId, (op) => op.status === 'succeeded', 30_000);
    for (const job of jobs) {
      expect(await squeueJob(job), job).toMatchObject({ restart_cnt: 1 });
      const [allocation] = await allocationsOf(job);
      expect(allocation).toMatchObject({ live: false, ending: { action: 'requeue' } });
    }
    await slurm.slurm('scancel', jobs);
    await call(h, 'POST', `/v1/nodes/${node1}/uncordon`, { body: {} });
    await until(async () => (await sinfoWord(NODE1)) === 'idle');
  });

  it('with the API away for a while, records and releases what changed meanwhile once it is back, nothing twice', async () => {
    const ended = await sbatch(['-w', NODE1]);
    await until(async () => (await live(node1)).length === 1);
    const from = bridge.lines.length;
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    await slurm.slurm('scancel', [ended]);
    const started = await sbatch(['-w', NODE1]);
    // The hook woke it, the pass found no API: it says so and tries again later.
    await bridge.logged((l) => String(l.message).startsWith('pass failed'), from);
    server = (await listen(h.deps, port)).server;
    await until(async () => {
      const items = await live(node1);
      return items.length === 1 && items[0]!.externalId === started;
    });
    expect(await allocationsOf(ended)).toMatchObject([{ live: false }]);
    expect(await allocationsOf(started)).toHaveLength(1);
    await slurm.slurm('scancel', [started]);
    await until(async () => (await live(node1)).length === 0);
  });
});
