import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config';
import { startSlurm, type SlurmCluster, type SlurmNodeView } from '../../scripts/services/slurm';
import { slurmScheduler } from '../../bridges/slurm/scheduler';
import { eventually } from '../support/harness';

// What the Slurm bridge (issue 31) will rely on, held against a real slurmctld and real slurmd
// (Debian's slurm-wlm 22.05): the fields of `squeue --json` and `sinfo --json`, a drain and its
// reason, scancel and requeue, RESUME, a slurmctld restart mid-drain, and EpilogSlurmctld's env;
// then the adapter's own hook path (bridges/slurm/scheduler.ts) against the same daemons.

/** A job as `squeue --json` (data parser v0.0.38) lists it: the fields the bridge reads. */
interface SqueueJob {
  job_id: number;
  array_job_id: number;
  array_task_id: number | null;
  array_task_string: string;
  het_job_id: number;
  het_job_offset: number;
  het_job_id_set: string;
  account: string;
  partition: string;
  nodes: string;
  job_state: string;
  state_reason: string;
  /** Unix seconds. */
  start_time: number;
  end_time: number;
  /**
   * Minutes. A job without a limit (the partition's MaxTime=INFINITE) reads null, or 525600 (a
   * year) once a scheduler pass set it: both are seen here, with end_time a year after start_time
   * (to the second: one more was seen).
   */
  time_limit: number | null;
  requeue: boolean;
  restart_cnt: number;
}

const NODE = 'gpu-b7-01';
const REASON = 'drydock: test (op_x)';
/** How Slurm 22.05 spells "no time limit" once it has looked at a job. */
const YEAR_MINUTES = 365 * 24 * 60;

let slurm: SlurmCluster;
let hooks: string;

const jobs = async () => (await slurm.slurmJson<{ jobs: SqueueJob[] }>('squeue')).jobs;
const job = async (id: number) => (await jobs()).find((j) => j.job_id === id);
const node = async (name: string) => (await slurm.nodeStates()).find((n) => n.name === name)!;
/** What `sinfo` itself calls the node's state: draining, drained, idle, mixed, … */
const sinfoWord = async (name: string) =>
  (await slurm.slurm('sinfo', ['--noheader', '--nodes', name, '--format=%T'])).trim();
const sbatch = async (args: string[]) =>
  Number((await slurm.slurm('sbatch', ['--parsable', ...args, '--wrap', 'sleep 30'])).trim().split(';')[0]);

/** The env slurmctld gave the hook `context` (epilog_slurmctld, prolog_slurmctld) for a job, once it ran. */
function hookEnv(context: string, jobId: number, restartCount = 0): Record<string, string> | undefined {
  const file = join(hooks, `${context}.${jobId}.${restartCount}.env`);
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

beforeAll(async () => {
  hooks = mkdtempSync(join(tmpdir(), 'drydock-slurm-hooks-'));
  // Each run writes its whole environment to a file of its own. slurmctld gives no PATH: absolute paths.
  const hook = (name: string) => {
    const path = join(hooks, `${name}.sh`);
    writeFileSync(
      path,
      `#!/bin/sh\n/usr/bin/env > "${hooks}/$SLURM_SCRIPT_CONTEXT.$SLURM_JOB_ID.$SLURM_JOB_RESTART_COUNT.env"\n`,
    );
    chmodSync(path, 0o755);
    return path;
  };
  slurm = await startSlurm({
    home: loadConfig().DRYDOCK_HOME,
    clusterName: 'drytest',
    nodes: [
      { name: NODE, cpus: 4, gres: [{ name: 'gpu', type: 'h100', count: 8 }] },
      { name: 'gpu-b7-02', cpus: 4, gres: [{ name: 'gpu', type: 'h100', count: 8 }] },
      { name: 'gpu-b7-03', cpus: 2 },
      // The hook path's own: jobs cancelled on the others may hold their CPUs for a while (seen
      // past 20 s on a loaded machine), and its jobs must run at once.
      { name: 'gpu-b7-04', cpus: 2 },
    ],
    epilogSlurmctld: hook('epilog'),
    prologSlurmctld: hook('prolog'),
    log: (line) => console.log(`[slurm] ${line}`),
  });
});

afterAll(async () => {
  await slurm?.stop();
  if (hooks) rmSync(hooks, { recursive: true, force: true });
});

describe('the Slurm harness: real slurmctld, slurmd and munged', () => {
  let requeueable = 0;
  let notRequeueable = 0;

  it('gives every node idle, with its CPUs and GPUs', async () => {
    expect(slurm.nodes).toEqual([NODE, 'gpu-b7-02', 'gpu-b7-03', 'gpu-b7-04']);
    const gres = await slurm.slurm('sinfo', ['--noheader', '--Node', '--format=%N %T %c %G']);
    expect(gres.trim().split('\n').sort()).toEqual([
      'gpu-b7-01 idle 4 gpu:h100:8',
      'gpu-b7-02 idle 4 gpu:h100:8',
      'gpu-b7-03 idle 2 (null)',
      'gpu-b7-04 idle 2 (null)',
    ]);
  });

  it('runs two jobs on one node, each listed by squeue --json with its id, account, start and limit', async () => {
    const submitted = Math.floor(Date.now() / 1000);
    requeueable = await sbatch(['-w', NODE, '-A', 'research', '-t', '10', '--requeue', '--gres=gpu:h100:2']);
    notRequeueable = await sbatch(['-w', NODE, '-A', 'ml-team', '--no-requeue']);
    const running = await eventually(async () => {
      const listed = (await jobs()).filter((j) => [requeueable, notRequeueable].includes(j.job_id));
      return listed.length === 2 && listed.every((j) => j.job_state === 'RUNNING') && listed;
    }, 20_000);
    const a = running.find((j) => j.job_id === requeueable)!;
    const b = running.find((j) => j.job_id === notRequeueable)!;
    const plain = { array_job_id: 0, array_task_id: null, het_job_id: 0, het_job_id_set: '' };
    expect(a).toMatchObject({
      ...plain,
      account: 'research',
      partition: slurm.partition,
      nodes: NODE,
      job_state: 'RUNNING',
      time_limit: 10,
      requeue: true,
      restart_cnt: 0,
    });
    expect(b).toMatchObject({
      ...plain,
      account: 'ml-team',
      partition: slurm.partition,
      nodes: NODE,
      job_state: 'RUNNING',
      requeue: false,
    });
    expect([null, YEAR_MINUTES]).toContain(b.time_limit);
    // end_time is start_time plus the limit, give or take the second Slurm rounds to.
    expect(Math.abs(b.end_time - (b.start_time + YEAR_MINUTES * 60))).toBeLessThanOrEqual(1);
    for (const j of [a, b]) {
      expect(j.start_time).toBeGreaterThanOrEqual(submitted);
      expect(j.start_time).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    }
    expect(Math.abs(a.end_time - (a.start_time + 10 * 60))).toBeLessThanOrEqual(1);
    expect(await node(NODE)).toMatchObject({ state: 'mixed', state_flags: [], reason: '' });
    // PrologSlurmctld ran for each job before it started, with its id and account.
    expect(hookEnv('prolog_slurmctld', requeueable)).toMatchObject({
      SLURM_JOB_ID: String(requeueable),
      SLURM_JOB_ACCOUNT: 'research',
      SLURM_JOB_NODELIST: NODE,
    });
    expect(hookEnv('prolog_slurmctld', notRequeueable)).toMatchObject({ SLURM_JOB_ACCOUNT: 'ml-team' });
  });

  it('lists each task of an array job and each component of a het job by a job_id of its own', async () => {
    const array = await sbatch(['-w', 'gpu-b7-02', '--array=0-1']);
    const het = Number(
      (
        await slurm.slurm('sbatch', [
          '--parsable',
          '-w',
          'gpu-b7-02',
          '--wrap',
          'sleep 30',
          ':',
          '-w',
          'gpu-b7-03',
          '--wrap',
          'sleep 30',
        ])
      ).trim(),
    );
    const listed = await eventually(async () => {
      const all = (await jobs()).filter((j) => j.array_job_id === array || j.het_job_id === het);
      return all.length === 4 && all.every((j) => j.job_state === 'RUNNING') && all;
    }, 20_000);
    const tasks = listed
      .filter((j) => j.array_job_id === array)
      .sort((x, y) => x.array_task_id! - y.array_task_id!);
    expect(tasks.map((j) => [j.array_task_id, j.nodes])).toEqual([
      [0, 'gpu-b7-02'],
      [1, 'gpu-b7-02'],
    ]);
    // The array's own id goes to one of its tasks; every task has a job_id, all different.
    expect(new Set(tasks.map((j) => j.job_id)).size).toBe(2);
    expect(tasks.map((j) => j.job_id)).toContain(array);
    const parts = listed
      .filter((j) => j.het_job_id === het)
      .sort((x, y) => x.het_job_offset - y.het_job_offset);
    expect(parts.map((j) => [j.job_id, j.het_job_offset, j.het_job_id_set, j.nodes])).toEqual([
      [het, 0, `${het}-${het + 1}`, 'gpu-b7-02'],
      [het + 1, 1, `${het}-${het + 1}`, 'gpu-b7-03'],
    ]);
    await slurm.slurm('scancel', [String(array), String(het)]);
  });

  it('drains the node with drydock’s reason: sinfo --json says mixed + DRAIN, sinfo says draining', async () => {
    await slurm.slurm('scontrol', ['update', `NodeName=${NODE}`, 'State=DRAIN', `Reason=${REASON}`]);
    expect(await node(NODE)).toMatchObject({ state: 'mixed', state_flags: ['DRAIN'], reason: REASON });
    expect(await sinfoWord(NODE)).toBe('draining');
    expect((await job(requeueable))?.job_state).toBe('RUNNING');
    expect((await job(notRequeueable))?.job_state).toBe('RUNNING');
  });

  it('keeps the jobs and the drain across a slurmctld restart', async () => {
    const before = await jobs();
    await slurm.restartSlurmctld(async () => {
      // What a client (the bridge) meets while the controller is down, after trying for about
      // MessageTimeout (10 s): squeue --json and sinfo --json exit 0 with an empty list and say why
      // in `errors` (an empty list is "none" only when `errors` is empty); scontrol fails.
      const asking = Date.now();
      const [queue, info, show] = await Promise.all([
        slurm.slurm('squeue', ['--json']),
        slurm.slurm('sinfo', ['--json']),
        slurm.slurm('scontrol', ['show', 'node', NODE]).then(
          () => 'answered',
          (error: Error) => error.message,
        ),
      ]);
      console.log(`[slurm] clients answered in ${Date.now() - asking} ms with slurmctld down`);
      expect(JSON.parse(queue)).toMatchObject({
        jobs: [],
        errors: [expect.objectContaining({ source: 'slurm_load_jobs' })],
      });
      expect(JSON.parse(info)).toMatchObject({ nodes: [], errors: [expect.anything()] });
      expect(show).toMatch(/Unable to contact slurm controller/);
    });
    const after = await jobs();
    for (const id of [requeueable, notRequeueable]) {
      const was = before.find((j) => j.job_id === id)!;
      expect(after.find((j) => j.job_id === id)).toMatchObject({
        job_state: 'RUNNING',
        nodes: NODE,
        start_time: was.start_time,
        account: was.account,
      });
    }
    expect(await node(NODE)).toMatchObject({ state_flags: ['DRAIN'], reason: REASON });
    expect(await sinfoWord(NODE)).toBe('draining');
  });

  it('ends the jobs: scancel, requeue (refused for a --no-requeue job); the node drains; the epilog runs for each', async () => {
    await expect(slurm.slurm('scontrol', ['requeue', String(notRequeueable)])).rejects.toThrow(
      /Requested operation is presently disabled/,
    );
    const ending = Date.now();
    await slurm.slurm('scancel', [String(notRequeueable)]);
    await slurm.slurm('scontrol', ['requeue', String(requeueable)]);

    // squeue --json keeps an ended job (MinJobAge, 300 s by default) in a terminal state.
    await eventually(async () => (await job(notRequeueable))?.job_state === 'CANCELLED', 10_000);
    // Pending at once; its reason reads None until slurmctld's next look gives it BeginTime.
    const requeued = await eventually(async () => {
      const j = await job(requeueable);
      return j?.job_state === 'PENDING' && j.state_reason !== 'None' && j;
    }, 10_000);
    expect(requeued).toMatchObject({ nodes: '', restart_cnt: 1, state_reason: 'BeginTime', requeue: true });

    const cancelledEnv = await eventually(async () => hookEnv('epilog_slurmctld', notRequeueable), 10_000);
    const requeuedEnv = await eventually(async () => hookEnv('epilog_slurmctld', requeueable, 1), 10_000);
    console.log(`[slurm] both EpilogSlurmctld runs within ${Date.now() - ending} ms of scancel/requeue`);
    expect(cancelledEnv).toMatchObject({
      SLURM_SCRIPT_CONTEXT: 'epilog_slurmctld',
      SLURM_CLUSTER_NAME: 'drytest',
      SLURM_JOB_ID: String(notRequeueable),
      SLURM_JOB_ACCOUNT: 'ml-team',
      SLURM_JOB_PARTITION: slurm.partition,
      SLURM_JOB_NODELIST: NODE,
    });
    expect(requeuedEnv).toMatchObject({ SLURM_JOB_ID: String(requeueable), SLURM_JOB_RESTART_COUNT: '1' });
    expect(cancelledEnv.PATH).toBeUndefined();

    const drained = await eventually(async () => {
      const n = await node(NODE);
      return n.state === 'idle' && n;
    }, 10_000);
    expect(drained).toMatchObject<Partial<SlurmNodeView>>({ state_flags: ['DRAIN'], reason: REASON });
    expect(await sinfoWord(NODE)).toBe('drained');
  });

  it('RESUME makes the node idle again, its reason cleared; the requeued job waits for its begin time', async () => {
    await slurm.slurm('scontrol', ['update', `NodeName=${NODE}`, 'State=RESUME']);
    await eventually(async () => {
      const n = await node(NODE);
      return n.state === 'idle' && n.state_flags.length === 0 && n.reason === '';
    }, 10_000);
    expect(await sinfoWord(NODE)).toBe('idle');
    expect((await job(requeueable))?.job_state).toBe('PENDING');
  });
});

describe("the Slurm adapter's hook path, against the same slurmctld", () => {
  it('releases at once a job squeue confirms ended, never one a file merely names', async () => {
    const spool = mkdtempSync(join(tmpdir(), 'drydock-slurm-spool-'));
    const other = 'gpu-b7-04';
    const [running, cancelled] = [await sbatch(['-w', other]), await sbatch(['-w', other])];
    await eventually(async () => (await job(cancelled))?.job_state === 'RUNNING', 10_000);
    await slurm.slurm('scancel', [String(cancelled)]);
    await eventually(async () => (await job(cancelled))?.job_state !== 'RUNNING', 10_000);
    expect((await job(running))?.job_state).toBe('RUNNING');

    const ended: string[][] = [];
    let changed = 0;
    const failures: Error[] = [];
    const stop = slurmScheduler({
      cluster: 'drytest',
      env: { ...process.env, ...slurm.env },
      end: { default: 'requeue', byQueue: {} },
      spool,
    }).watchWork({
      changed: () => changed++,
      ended: (ids) => ended.push(ids),
      failed: (e) => failures.push(e),
    });
    try {
      // The hook's file for the job that ended, and a forged one for a job that still runs.
      writeFileSync(join(spool, `${cancelled}.epilog_slurmctld`), '');
      writeFileSync(join(spool, `${running}.epilog_slurmctld`), '');
      await eventually(async () => ended.length > 0 && changed > 0, 10_000);
      expect(ended.flat()).toEqual([String(cancelled)]);
      expect(failures).toEqual([]);
    } finally {
      stop();
      rmSync(spool, { recursive: true, force: true });
      await slurm.slurm('scancel', [String(running)]);
    }
  });
});
