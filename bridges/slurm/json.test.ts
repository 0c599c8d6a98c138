import { describe, expect, it } from 'vitest';
import { endedWork, jobIdOf, nodesOfSinfo, workOfSqueue } from './json';

const job = (over: Record<string, unknown> = {}) => ({
  job_id: 4711,
  array_job_id: 0,
  array_task_id: null,
  het_job_id: 0,
  het_job_offset: 0,
  account: 'physics',
  partition: 'batch',
  nodes: 'n1',
  job_state: 'RUNNING',
  start_time: 1_800_000_000,
  time_limit: 60,
  requeue: true,
  ...over,
});

describe('what the bridge reads of squeue --json', () => {
  it('names jobs as Slurm lists them: plain, array task, het component', () => {
    expect(jobIdOf(job())).toBe('4711');
    expect(jobIdOf(job({ job_id: 4714, array_job_id: 4711, array_task_id: 3 }))).toBe('4711_3');
    expect(jobIdOf(job({ job_id: 4712, het_job_id: 4711, het_job_offset: 1 }))).toBe('4711+1');
  });

  it('lists running work per node, with its end from the limit and none without one', () => {
    const work = workOfSqueue({
      jobs: [
        job(),
        job({ job_id: 2, nodes: 'n[2-3]', time_limit: 525_600, account: '', requeue: false }),
        job({ job_id: 3, job_state: 'PENDING' }),
        job({ job_id: 4, job_state: 'COMPLETING' }),
      ],
    });
    expect(work).toEqual([
      {
        id: '4711',
        node: 'n1',
        owner: 'physics',
        queue: 'batch',
        endsAt: new Date((1_800_000_000 + 3600) * 1000),
        restartable: true,
      },
      { id: '2/n2', node: 'n2', owner: null, queue: 'batch', endsAt: null, restartable: false },
      { id: '2/n3', node: 'n3', owner: null, queue: 'batch', endsAt: null, restartable: false },
    ]);
  });

  it('takes an answer with errors (slurmctld away) for no answer, never for "nothing runs"', () => {
    expect(() =>
      workOfSqueue({ jobs: [], errors: [{ error: 'Unable to contact slurm controller' }] }),
    ).toThrow('squeue --json answered with errors');
    expect(() => nodesOfSinfo({ nodes: [], errors: [{ error: 'x' }] })).toThrow(
      'sinfo --json answered with errors',
    );
  });
});

describe('what the bridge reads of sinfo --json', () => {
  it("gives each node its state words, Drydock's cordon (DRAIN), reason, whether it is down and whether it answers", () => {
    expect(
      nodesOfSinfo({
        nodes: [
          { name: 'n1', state: 'mixed', state_flags: ['DRAIN'], reason: 'drydock: cordoned' },
          { name: 'n2', state: 'idle', state_flags: ['NOT_RESPONDING'], reason: '' },
          { name: 'n3', state: 'down', state_flags: [], reason: 'psu' },
          { name: 'n1', state: 'mixed', state_flags: ['DRAIN'], reason: 'drydock: cordoned' },
        ],
      }),
    ).toEqual([
      {
        name: 'n1',
        state: 'mixed+drain',
        cordoned: true,
        reason: 'drydock: cordoned',
        down: false,
        unresponsive: false,
      },
      {
        name: 'n2',
        state: 'idle+not_responding',
        cordoned: false,
        reason: null,
        down: false,
        unresponsive: true,
      },
      { name: 'n3', state: 'down', cordoned: false, reason: 'psu', down: true, unresponsive: false },
    ]);
  });
});

describe("what the bridge reads of squeue's lines for the jobs its hook named", () => {
  it('names the work of jobs no longer running, per node, and says whether each asked job was settled', () => {
    const lines = ['4711|4711|COMPLETED|n1', '4714|4712_3|CANCELLED|n[2-3]', '4720|4720|RUNNING|n4', ''];
    expect(endedWork(lines.join('\n'), new Set(['4711', '4714', '4720']))).toEqual({
      ended: ['4711', '4712_3/n2', '4712_3/n3'],
      all: false,
    });
    expect(endedWork('4711|4711+0|COMPLETING|n1\n', new Set(['4711']))).toEqual({
      ended: ['4711+0'],
      all: true,
    });
  });

  it("an array's own id lists its tasks: the ended are released, the running are no concern", () => {
    const lines = '3|3_2|CANCELLED|q1\n4|3_1|RUNNING|q1\n';
    expect(endedWork(lines, new Set(['3']))).toEqual({ ended: ['3_2'], all: true });
  });

  it('leaves to a pass a job squeue did not list, or listed without its nodes (requeued)', () => {
    expect(endedWork('', new Set(['99']))).toEqual({ ended: [], all: false });
    expect(endedWork('4711|4711|PENDING|\n', new Set(['4711']))).toEqual({ ended: [], all: false });
  });
});
