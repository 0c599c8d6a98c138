import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { EndingAction } from '../../domain/observed';
import { endActionFor, type EndPolicy, type SchedulerWork } from '../../domain/scheduler';
import type { Scheduler, WorkWatch } from '../scheduler';
import { ENDED_FORMAT, endedWork, nodesOfSinfo, slurmJobId, workOfSqueue } from './json';
import { watchSpool } from './spool';

const exec = promisify(execFile);

/** How long one Slurm client may take before the call counts as failed. */
const CLIENT_TIMEOUT_MS = 15_000;
/** bin/drydock-slurm-hook's file for a job's end: `<SLURM_JOB_ID>.epilog_slurmctld`. */
const EPILOG_FILE = /^(\d{1,10})\.epilog_slurmctld$/;

export interface SlurmOptions {
  cluster: string;
  /** The environment of the Slurm clients (SLURM_CONF, PATH). */
  env: NodeJS.ProcessEnv;
  /** Per partition, whether a job a drain's deadline lets go is requeued or cancelled. */
  end: EndPolicy;
  /** The directory the PrologSlurmctld/EpilogSlurmctld hook drops a file in, per job start or end. */
  spool: string;
}

/** The Slurm adapter: Slurm's own clients (sinfo, squeue, scontrol, scancel), as an administrator runs them. */
export function slurmScheduler(options: SlurmOptions): Scheduler {
  const run = async (command: string, args: string[]): Promise<string> => {
    try {
      const { stdout, stderr } = await exec(command, args, {
        env: options.env,
        timeout: CLIENT_TIMEOUT_MS,
        maxBuffer: 256 * 1024 * 1024,
      });
      return `${stdout}${stderr}`;
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      throw new Error(`${command} ${args.join(' ')}: ${(failed.stderr || failed.message).trim()}`);
    }
  };
  const json = async (command: 'sinfo' | 'squeue') => JSON.parse(await run(command, ['--json'])) as object;

  /**
   * The hook's files: a job's end (EpilogSlurmctld) is checked with one `squeue -j` of just those
   * jobs — a file proves nothing, anyone may write one — and what squeue says ended is released
   * at once; a start, or an end squeue does not confirm, wakes a pass.
   */
  const onHookFiles = async (files: string[], watch: WorkWatch) => {
    const ends = new Set(files.map((f) => EPILOG_FILE.exec(f)?.[1]).filter((id) => id !== undefined));
    if (ends.size < files.length) watch.changed();
    if (ends.size === 0) return;
    try {
      const jobs = `-j${[...ends].join(',')}`;
      const { ended, all } = endedWork(
        await run('squeue', ['-h', '-t', 'all', jobs, '-o', ENDED_FORMAT]),
        ends,
      );
      if (ended.length > 0) watch.ended(ended);
      if (!all) watch.changed();
    } catch {
      watch.changed();
    }
  };

  return {
    source: `slurm:${options.cluster}`,
    listNodes: async () => nodesOfSinfo(await json('sinfo')),
    listWork: async () => workOfSqueue(await json('squeue')),
    watchWork: (watch) => watchSpool(options.spool, (files) => void onHookFiles(files, watch), watch.failed),
    async cordon(node, reason) {
      await run('scontrol', ['update', `NodeName=${node}`, 'State=DRAIN', `Reason=${reason}`]);
    },
    async uncordon(node) {
      await run('scontrol', ['update', `NodeName=${node}`, 'State=RESUME']);
    },
    // A job is left to end by itself until a drain's deadline lets it go.
    endAction: (work, forced) => (forced ? endActionFor(options.end, work) : null),
    async endWork(work: SchedulerWork, action: EndingAction) {
      const id = slurmJobId(work);
      const said = await (action === 'requeue' ? run('scontrol', ['requeue', id]) : run('scancel', [id]));
      return said.trim() || (action === 'requeue' ? `job ${id} requeued` : `job ${id} cancelled`);
    },
  };
}
