import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { startSlurm, type SlurmCluster } from '../scripts/services/slurm';
import { slurmHook, startBridge, untilReported, type BridgeProcess } from './support/bridge';
import { readNode, useCli } from './support/cli';
import { call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { bash, operatorEnv, sectionedBlocks } from './support/runbook';

/**
 * The Slurm rack runbook, run as an operator would: its ```bash blocks, as written, in a bash with
 * `set -euo pipefail` and the Slurm clients on PATH, against a real Slurm (slurmctld, a slurmd per
 * node, munged), the real API and worker, and `drydock-bridge slurm` as its own process. The jobs
 * are Slurm's: short ones end by themselves, a long requeueable one is requeued by the deadline.
 * Between the put-back's two runs a Slurm administrator drains a node for a reason of their own,
 * and later resumes it.
 */

const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/drain-a-slurm-rack.md', import.meta.url));

const CLUSTER = 'hpc1';
const SOURCE = `slurm:${CLUSTER}`;
const POOL = 'pool-h100-east';
const RACK = ['gpu-b7-01', 'gpu-b7-02'] as const;
const OTHER = 'gpu-b8-01';
const CHANGE = 'CHG-1234';
const REASON = `driver roll-out on rack b7 (${CHANGE})`;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const h = useHarness();
const cli = useCli(h);

const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-runbook-slurm-rack-'));
let slurm: SlurmCluster;
let bridge: BridgeProcess;
/** Drydock node id by hostname (= Slurm NodeName). */
const ids: Record<string, string> = {};

const markdown = readFileSync(RUNBOOK, 'utf8');
const runnable = sectionedBlocks(markdown).filter((b) => b.lang === 'bash');

const PARTS = {
  drain: [
    'Before you start',
    'Check that the bridge sees the rack',
    'Make room in the disruption budget',
    'Drain the rack',
    'Watch Slurm follow',
    'Wait for the rack to drain',
    'Record what was drained',
    'Roll out the driver',
  ],
  putBack: ['Before you start', 'Put the rack back'],
};

/** The bash blocks of these sections, in the page's order, as one script. */
function script(sections: readonly string[]): string {
  const chosen = runnable.filter((b) => sections.includes(b.section));
  return ['set -euo pipefail', ...chosen.map((b) => `# runbook line ${b.line}\n${b.code}`)].join('\n');
}

/** A fresh operator shell running `sections`; the shell's exit code is for the caller to judge. */
async function operator(sections: readonly string[], name: string) {
  const env = operatorEnv(dir, {
    DRYDOCK_API: cli.api,
    DRYDOCK_TOKEN: h.operatorKey,
    POOL,
    RACK: 'b7',
    CLUSTER,
    DEADLINE: '20s',
    ROLL_OUT: joinPath(dir, 'roll-out-driver'),
    CHANGE,
    SLURM_CONF: slurm.env.SLURM_CONF,
  });
  const text = script(sections);
  writeFileSync(joinPath(dir, `${name}.sh`), text);
  const run = await bash(text, env, dir, 180_000);
  return { ...run, said: `stdout:\n${run.stdout}\nstderr:\n${run.stderr}` };
}

const sbatch = async (args: string[], command: string) =>
  (await slurm.slurm('sbatch', ['--parsable', ...args, '--wrap', command])).trim().split(';')[0]!;
const squeueJob = async (id: string) =>
  (
    await slurm.slurmJson<{
      jobs: { job_id: number; job_state: string; restart_cnt: number; state_reason: string }[];
    }>('squeue')
  ).jobs.find((j) => String(j.job_id) === id);
/** A job's shell loop that returns once Slurm has its node draining (or drained). */
const untilDraining = (name: string) =>
  `until sinfo -h -N -n ${name} -o %T | grep -q drain; do sleep 1; done`;
const slurmNode = async (name: string) => (await slurm.nodeStates()).find((n) => n.name === name)!;
/** What `sinfo` itself calls the node's state: draining, drained, idle, mixed, … */
const sinfoWord = async (name: string) =>
  (await slurm.slurm('sinfo', ['--noheader', '--nodes', name, '--format=%T'])).trim();
const allocationOf = async (externalId: string) =>
  (await call(h, 'GET', `/v1/allocations?source=${SOURCE}&externalId=${externalId}`)).body.items as {
    id: string;
    nodeId: string;
    live: boolean;
    releasedAt: string | null;
    releasedBy: string | null;
    endRequestedAt: string | null;
    ending: { action: string; answer: string } | null;
  }[];
const liveJobs = async () =>
  (await call(h, 'GET', `/v1/allocations?source=${SOURCE}&live=true`)).body.items as { externalId: string }[];

beforeAll(async () => {
  const spool = joinPath(dir, 'spool');
  const hook = slurmHook(dir, spool);
  slurm = await startSlurm({
    home: loadConfig().DRYDOCK_HOME,
    clusterName: CLUSTER,
    nodes: [...RACK, OTHER].map((name) => ({ name, cpus: 2 })),
    epilogSlurmctld: hook,
    prologSlurmctld: hook,
  });
  await seedPool(h, { id: POOL, tenantId: 'acme' });
  for (const name of RACK)
    ids[name] = await seedNode(h, { poolId: POOL, hostname: name, labels: { rack: 'b7' } });
  ids[OTHER] = await seedNode(h, { poolId: POOL, hostname: OTHER, labels: { rack: 'b8' } });
  const key = await call(h, 'POST', '/v1/keys', { body: { name: `slurm-bridge-${CLUSTER}` } });
  const config = joinPath(dir, 'bridge.yaml');
  writeFileSync(config, 'end:\n  default: requeue\n');
  bridge = startBridge({
    api: cli.api,
    token: key.body.secret as string,
    argv: ['slurm', '--cluster', CLUSTER, '--spool', spool, '--config', config, '--sweep-every', '10s'],
    env: slurm.env,
  });
  // The site's roll-out, here harmless: it notes the machine and what Slurm says of it then.
  const rollOut = joinPath(dir, 'roll-out-driver');
  writeFileSync(
    rollOut,
    `#!/bin/sh\necho "$1 $(sinfo -h -N -n "$1" -o %T) $(squeue -h -w "$1" -o %i | wc -l)" >> '${dir}/rolled-out.txt'\n`,
  );
  chmodSync(rollOut, 0o755);
  await untilReported(h, Object.values(ids));
}, 240_000);

afterAll(async () => {
  await bridge?.stop();
  await slurm?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/runbooks/drain-a-slurm-rack.md', () => {
  it('has its steps in order, runs every bash block in this test, and keeps the site-specific roll-out a placeholder', () => {
    const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([...PARTS.drain, 'Put the rack back', 'When something goes wrong']);
    // Each section the test runs has its block, and no block is left untested.
    const tested = new Set([...PARTS.drain, ...PARTS.putBack]);
    for (const section of tested) expect(runnable.map((b) => b.section)).toContain(section);
    for (const block of runnable) expect(tested, `line ${block.line}`).toContain(block.section);
    const all = runnable.map((b) => b.code).join('\n');
    expect(all).toContain('drydock pools drain "$POOL" --selector "rack=$RACK"');
    expect(all).toContain('"$ROLL_OUT" "$host"');
    expect(all).not.toMatch(/nvidia-smi|scontrol|scancel|sbatch/);
    expect(markdown).toMatch(/\[bridges\/slurm\.md\]\(\.\.\/bridges\/slurm\.md\)/);
    for (const part of Object.values(PARTS)) {
      const checked = spawnSync('bash', ['-n', '-c', script(part)], { encoding: 'utf8' });
      expect(checked.stderr).toBe('');
    }
  });

  it('runs as written: Slurm drains the rack with Drydock’s reasons, short jobs end, the long one is requeued, and the rack comes back in both', async () => {
    // Short jobs end by themselves a few seconds after their node drains in Slurm (as a job that
    // checkpoints and exits when it sees its node draining); the long one runs until it is ended.
    const short = [];
    for (const name of RACK) {
      short.push(await sbatch(['-w', name], `${untilDraining(name)}; sleep 3`));
    }
    const long = await sbatch(['-w', RACK[1], '--requeue'], 'sleep 600');
    const elsewhere = await sbatch(['-w', OTHER], 'sleep 600');
    await eventually(async () => (await liveJobs()).length === 4, 30_000, 100);

    // The drain, up to the roll-out.
    const drained = await operator(PARTS.drain, 'drain');
    expect(drained.code, drained.said).toBe(0);
    const out = drained.stdout;
    expect(out).toMatch(
      new RegExp(`^gpu-b7-02 \\(${ids[RACK[1]]}\\): ${SOURCE} gpu-b7-02 allocated, live jobs: 2$`, 'm'),
    );
    expect(out).toMatch(/^disruption budget of pool-h100-east: 1 nodes out at once; this change needs 2$/m);
    expect(out).toMatch(/^pool pool-h100-east: pool-drain op_[0-9a-z]{26} (pending|running), 2 nodes$/m);
    // Watching: the drain of gpu-b7-02 waits for its jobs, by Slurm id.
    expect(out).toMatch(/^2 of 2 nodes drained in Slurm by Drydock$/m);
    expect(out).toMatch(new RegExp(`^${ids[RACK[1]]} (pending|running): .*${SOURCE} ${long}\\b`, 'm'));
    expect(out).toMatch(/^pool-h100-east: Succeeded: 2 drained, 0 draining, 0 pending, 0 failed\.$/m);
    expect(out).toMatch(/^2 nodes drained; jobs ended by the deadline: 1$/m);
    expect(out).toMatch(new RegExp(`^gpu-b7-02: job ${long} requeue \\(job ${long} requeued\\)$`, 'm'));
    expect(out).toMatch(new RegExp(`^${long} PENDING `, 'm'));

    // One pool drain under the change's key; a drain per rack node, none elsewhere.
    const poolDrains = (await call(h, 'GET', `/v1/operations?poolId=${POOL}&kind=pool-drain`)).body.items;
    expect(poolDrains).toMatchObject([{ status: 'succeeded', idempotencyKey: `rack-b7-${CHANGE}` }]);
    const drains = (await call(h, 'GET', `/v1/operations?poolId=${POOL}&kind=drain`)).body.items as {
      id: string;
      nodeId: string;
      status: string;
      createdAt: string;
    }[];
    expect(drains.map((d) => d.nodeId).sort()).toEqual(RACK.map((n) => ids[n]).sort());
    const drainOf = (name: string) => drains.find((d) => d.nodeId === ids[name])!;

    // `sinfo -R` showed each rack node draining with Drydock's reason naming that node's drain;
    // drained now, each keeps that reason in Slurm.
    const lines = out.split('\n');
    expect(lines).toContain(`gpu-b7-02|draining|drydock: ${REASON} (${drainOf(RACK[1]).id})`);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^gpu-b7-01\\|(draining|drained)\\|drydock: ${escape(REASON)} \\(${drainOf(RACK[0]).id}\\)$`,
          ),
        ),
      ]),
    );
    for (const name of RACK) {
      expect(await sinfoWord(name)).toBe('drained');
      // The drain's reason stays once it is over: sinfo -R says why and which operation.
      expect((await slurmNode(name)).reason).toBe(`drydock: ${REASON} (${drainOf(name).id})`);
    }
    // The short jobs ended by themselves, after their node's drain began: released by the bridge,
    // never asked to end.
    for (const [i, job] of short.entries()) {
      const [allocation] = await allocationOf(job);
      expect(allocation).toMatchObject({
        live: false,
        releasedBy: `key:slurm-bridge-${CLUSTER}`,
        endRequestedAt: null,
        ending: null,
      });
      expect(Date.parse(allocation!.releasedAt!)).toBeGreaterThan(Date.parse(drainOf(RACK[i]!).createdAt));
      expect(['COMPLETED', undefined]).toContain((await squeueJob(job))?.job_state);
    }
    // The long one: requeued by the deadline, not lost — back in Slurm's queue, once.
    const [requeued] = await allocationOf(long);
    expect(requeued).toMatchObject({
      live: false,
      releasedBy: `key:slurm-bridge-${CLUSTER}`,
      ending: { action: 'requeue', answer: `job ${long} requeued` },
    });
    expect(await squeueJob(long)).toMatchObject({ job_state: 'PENDING', restart_cnt: 1 });
    expect(
      (await eventsOf(h, ids[RACK[1]]!, 'allocation.force-released')).map((e) => e.data.allocationId),
    ).toEqual([requeued!.id]);
    // The roll-out ran on each rack machine once, while Slurm had it drained and ran nothing there.
    expect(readFileSync(joinPath(dir, 'rolled-out.txt'), 'utf8')).toBe(
      RACK.map((name) => `${name} drained 0\n`).join(''),
    );

    // During the roll-out a Slurm administrator finds a bad fan on gpu-b7-01 and drains it in Slurm.
    await slurm.slurm('scontrol', ['update', `NodeName=${RACK[0]}`, 'State=DRAIN', 'Reason=bad fan']);
    const stopped = await operator(PARTS.putBack, 'put-back-1');
    expect(stopped.code, stopped.said).toBe(1);
    expect(stopped.stderr).toMatch(/^gpu-b7-01: drained in Slurm by someone else: bad fan$/m);
    expect(stopped.stderr).toContain(
      "not back as before the change (above): see 'When something goes wrong'",
    );
    // The bridge lifted Drydock's drain and left the administrator's; Drydock shows the disagreement.
    expect(await slurmNode(RACK[0])).toMatchObject({ reason: 'bad fan', state_flags: ['DRAIN'] });
    const disagreed = await eventually(
      async () => (await readNode(h, ids[RACK[0]]!)).schedulers[0]?.disagreement,
      30_000,
      100,
    );
    expect(disagreed).toBe(
      `${SOURCE} has it drained for another reason (bad fan); Drydock's node is schedulable and leaves that drain alone`,
    );
    await eventually(async () => (await sinfoWord(RACK[1])) === 'idle', 30_000, 100);

    // The administrator resumes it; the put-back, run again, finishes.
    await slurm.slurm('scontrol', ['update', `NodeName=${RACK[0]}`, 'State=RESUME']);
    const back = await operator(PARTS.putBack, 'put-back-2');
    expect(back.code, back.said).toBe(0);
    expect(back.stdout).toMatch(
      new RegExp(`^rack b7 of ${POOL} back in service in Drydock and ${SOURCE}: 2 nodes, ${CHANGE}$`, 'm'),
    );

    // Both nodes idle in Slurm and schedulable in Drydock, each view saying so; the budget as it was.
    // The requeued job is in Slurm's queue still: Slurm lets it start again about 2 minutes after
    // its requeue, on gpu-b7-02 (it asked for that node), which then runs it (read after the nodes).
    const words = [await sinfoWord(RACK[0]), await sinfoWord(RACK[1])];
    const again = await squeueJob(long);
    expect(again).toMatchObject({ restart_cnt: 1 });
    expect(['PENDING', 'RUNNING']).toContain(again!.job_state);
    expect(words[0]).toBe('idle');
    expect(again!.job_state === 'RUNNING' ? ['idle', 'mixed'] : ['idle']).toContain(words[1]);
    for (const name of RACK) {
      const node = await readNode(h, ids[name]!);
      expect(node).toMatchObject({ cordoned: false, noScheduleReasons: [] });
      expect(node.schedulers).toMatchObject([
        { source: SOURCE, name, cordoned: false, down: false, disagreement: null },
      ]);
      // Put back, nothing took the moment Slurm could not reach it after RESUME for a fault.
      expect(node.conditions.filter((c: { type: string }) => c.type === 'SchedulerNodeDown')).toEqual([]);
    }
    expect((await call(h, 'GET', `/v1/pools/${POOL}/capacity`)).body.buckets).toMatchObject({
      schedulable: 3,
    });
    expect((await call(h, 'GET', `/v1/pools/${POOL}`)).body.policy).toEqual({});

    // The other rack: never drained in Slurm or Drydock, its job running all along.
    expect(await squeueJob(elsewhere)).toMatchObject({ job_state: 'RUNNING', restart_cnt: 0 });
    expect(await allocationOf(elsewhere)).toMatchObject([{ live: true }]);
    expect((await slurmNode(OTHER)).state_flags).toEqual([]);
    const otherEvents = await eventsOf(h, ids[OTHER]!, 'node.');
    expect(otherEvents.map((e) => e.type).filter((t) => t !== 'node.scheduler.changed')).toEqual([]);
  }, 300_000);
});
