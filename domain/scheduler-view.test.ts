import { describe, expect, it } from 'vitest';
import { downChange, downConditionOf, sameReport, type SchedulerReport } from './scheduler-view';

const up: SchedulerReport = {
  name: 'gpu-17',
  state: 'mixed',
  reason: null,
  cordoned: false,
  cordonedByDrydock: false,
  down: false,
  disagreement: null,
};
const down: SchedulerReport = { ...up, state: 'down*', reason: 'Not responding', down: true };

describe("a scheduler's report of a node", () => {
  it('is the same report only when every field is', () => {
    expect(sameReport(up, { ...up })).toBe(true);
    for (const change of [
      { name: 'gpu-18' },
      { state: 'idle' },
      { reason: 'bad fan' },
      { cordoned: true },
      { cordonedByDrydock: true },
      { down: true },
      { disagreement: 'Slurm drained it' },
    ]) {
      expect(sameReport(up, { ...up, ...change }), JSON.stringify(change)).toBe(false);
    }
  });
});

describe('what a changed report does to SchedulerNodeDown', () => {
  it('turns it true when the node goes down, with the source and its reason (its state when none)', () => {
    expect(downChange('slurm:hpc1', null, down, [], false)).toEqual({
      type: 'SchedulerNodeDown',
      status: true,
      reason: 'slurm:hpc1: Not responding',
    });
    expect(downChange('slurm:hpc1', up, { ...down, reason: null }, [], false)).toEqual({
      type: 'SchedulerNodeDown',
      status: true,
      reason: 'slurm:hpc1: down*',
    });
    // Down before and down now for a new reason: the reason follows.
    expect(downChange('slurm:hpc1', down, { ...down, reason: 'Kill task failed' }, [], true)).toEqual({
      type: 'SchedulerNodeDown',
      status: true,
      reason: 'slurm:hpc1: Kill task failed',
    });
  });

  it('leaves it when a down node stays down for the same reason (a clear by hand stays)', () => {
    expect(downChange('slurm:hpc1', down, { ...down, disagreement: 'x' }, [], true)).toBeNull();
    expect(downChange('slurm:hpc1', down, { ...down, cordoned: true }, [], false)).toBeNull();
  });

  it('turns it false when the node comes back, only while it is true', () => {
    expect(downChange('slurm:hpc1', down, { ...up, state: 'idle' }, [], true)).toEqual({
      type: 'SchedulerNodeDown',
      status: false,
      reason: 'slurm:hpc1: idle',
    });
    expect(downChange('slurm:hpc1', down, up, [], false)).toBeNull();
    expect(downChange('slurm:hpc1', up, { ...up, state: 'idle' }, [], true)).toBeNull();
    expect(downChange('slurm:hpc1', null, up, [], true)).toBeNull();
  });

  it('keeps it true while another scheduler still marks the node down, with that one as the reason', () => {
    const others = [
      { source: 'slurm:hpc2', report: up },
      { source: 'slurm:hpc3', report: { ...down, reason: 'Node unexpectedly rebooted' } },
    ];
    expect(downChange('slurm:hpc1', down, up, others, true)).toEqual({
      type: 'SchedulerNodeDown',
      status: true,
      reason: 'slurm:hpc3: Node unexpectedly rebooted',
    });
  });

  it('is SchedulerNodeNotReady for Kubernetes, set and cleared under that name, apart from the others', () => {
    expect(downConditionOf('slurm:hpc1')).toBe('SchedulerNodeDown');
    expect(downConditionOf('kubernetes:k1')).toBe('SchedulerNodeNotReady');
    const notReady = { ...up, state: 'NotReady', reason: 'KubeletNotReady', down: true };
    expect(downChange('kubernetes:k1', up, notReady, [], false)).toEqual({
      type: 'SchedulerNodeNotReady',
      status: true,
      reason: 'kubernetes:k1: KubeletNotReady',
    });
    // Slurm still marks the node down: that is SchedulerNodeDown's reason, not NotReady's.
    const slurmDown = [{ source: 'slurm:hpc1', report: down }];
    expect(downChange('kubernetes:k1', notReady, { ...up, state: 'Ready' }, slurmDown, true)).toEqual({
      type: 'SchedulerNodeNotReady',
      status: false,
      reason: 'kubernetes:k1: Ready',
    });
  });
});
