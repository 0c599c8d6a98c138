import type { SchedulerNodeState, SchedulerWork } from '../../domain/scheduler';
import { expandHostlist } from './hostlist';

// What the bridge reads of `sinfo --json` and `squeue --json` (data parser v0.0.38, Slurm 22.05),
// held against the real daemons by test/bridges/slurm-harness.test.ts.

interface SinfoNode {
  name: string;
  /** The base state, lower case: idle, mixed, allocated, down, unknown, … */
  state: string;
  state_flags?: string[];
  reason?: string;
}

interface SqueueJob {
  job_id: number;
  array_job_id?: number;
  array_task_id?: number | null;
  het_job_id?: number;
  het_job_offset?: number;
  account?: string;
  partition?: string;
  nodes?: string;
  job_state: string;
  /** Unix seconds. */
  start_time?: number;
  /** Minutes; null, or a year once slurmctld has looked, when there is no limit. */
  time_limit?: number | null;
  requeue?: boolean;
}

/** Job states in which a job holds its nodes. COMPLETING is ending: its work has stopped. */
const RUNNING_STATES = new Set(['RUNNING', 'SUSPENDED', 'CONFIGURING']);
/** How Slurm 22.05 spells "no time limit" once it has looked at a job: a year. */
const NO_LIMIT_MINUTES = 365 * 24 * 60;
const DOWN_STATES = new Set(['down', 'fail', 'error']);
const DOWN_FLAGS = new Set(['FAIL']);

/** The clients exit 0 with `errors` when slurmctld does not answer: that is no answer. */
function requireAnswer(command: string, document: { errors?: unknown[] }): void {
  const errors = document.errors ?? [];
  if (errors.length > 0) {
    throw new Error(`${command} --json answered with errors: ${JSON.stringify(errors).slice(0, 300)}`);
  }
}

export function nodesOfSinfo(document: { nodes?: SinfoNode[]; errors?: unknown[] }): SchedulerNodeState[] {
  requireAnswer('sinfo', document);
  const seen = new Map<string, SchedulerNodeState>();
  for (const node of document.nodes ?? []) {
    const flags = node.state_flags ?? [];
    seen.set(node.name, {
      name: node.name,
      state: [node.state, ...flags.map((f) => f.toLowerCase())].join('+'),
      cordoned: flags.includes('DRAIN'),
      reason: node.reason ? node.reason : null,
      down: DOWN_STATES.has(node.state) || flags.some((f) => DOWN_FLAGS.has(f)),
      unresponsive: flags.includes('NOT_RESPONDING'),
    });
  }
  return [...seen.values()];
}

/** A job's id as Slurm lists it: `4711`, an array task `4711_3`, a het job component `4711+1`. */
export function jobIdOf(job: SqueueJob): string {
  if (job.het_job_id) return `${job.het_job_id}+${job.het_job_offset ?? 0}`;
  if (job.array_job_id && job.array_task_id !== null && job.array_task_id !== undefined) {
    return `${job.array_job_id}_${job.array_task_id}`;
  }
  return String(job.job_id);
}

/** Every running job's share of each of its nodes; a job on several nodes is `<id>/<node>` on each. */
export function workOfSqueue(document: { jobs?: SqueueJob[]; errors?: unknown[] }): SchedulerWork[] {
  requireAnswer('squeue', document);
  const work: SchedulerWork[] = [];
  for (const job of document.jobs ?? []) {
    if (!RUNNING_STATES.has(job.job_state)) continue;
    const nodes = expandHostlist(job.nodes ?? '');
    const id = jobIdOf(job);
    const limit = job.time_limit ?? null;
    const endsAt =
      limit === null || limit >= NO_LIMIT_MINUTES || !job.start_time
        ? null
        : new Date((job.start_time + limit * 60) * 1000);
    for (const node of nodes) {
      work.push({
        id: workIdOf(id, node, nodes),
        node,
        owner: job.account ? job.account : null,
        queue: job.partition ? job.partition : null,
        endsAt,
        restartable: job.requeue ?? false,
      });
    }
  }
  return work;
}

/** A job's share of one of its nodes: the job's id on one node, `<id>/<node>` on each of several. */
function workIdOf(jobId: string, node: string, nodes: string[]): string {
  return nodes.length > 1 ? `${jobId}/${node}` : jobId;
}

/** What `endedWork` reads: squeue's lines for the jobs the hook named. */
export const ENDED_FORMAT = '%A|%i|%T|%N';

/**
 * The work of the jobs `squeue -h -t all -j <ids> -o ENDED_FORMAT` lists as no longer running,
 * and whether each asked job (by its own id, %A) was listed that way: one still running, gone from
 * slurmctld, or without its nodes (requeued) is for a pass to look at. Asked for an array's own
 * id, squeue lists every task of it; the ones still running are no concern here.
 */
export function endedWork(output: string, asked: ReadonlySet<string>): { ended: string[]; all: boolean } {
  const ended: string[] = [];
  const settled = new Set<string>();
  for (const line of output.split('\n')) {
    const [own, id, state, hostlist] = line.trim().split('|');
    if (!own || !id || !state || RUNNING_STATES.has(state)) continue;
    const nodes = expandHostlist(hostlist ?? '');
    if (nodes.length === 0) continue;
    settled.add(own);
    for (const node of nodes) ended.push(workIdOf(id, node, nodes));
  }
  return { ended, all: [...asked].every((id) => settled.has(id)) };
}

/** The Slurm job id of an entry of `workOfSqueue`: what scontrol and scancel take. */
export function slurmJobId(work: SchedulerWork): string {
  return work.id.split('/')[0]!;
}
