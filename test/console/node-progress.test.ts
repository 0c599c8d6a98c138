import { describe, expect, it } from 'vitest';
import {
  decommissionInWords,
  drainInWords,
  poolDrainInWords,
  progressInWords,
  purgeInWords,
  remediationInWords,
} from '../../console/progress';
import type {
  DrainProgress,
  PoolDrainProgress,
  PurgeProgress,
  RemediationProgress,
} from '../../workflows/definitions';

const drain = (p: Partial<DrainProgress>): DrainProgress => ({
  phase: 'waiting',
  liveAllocationCount: 2,
  liveAllocations: [],
  earliestEndsAt: null,
  nextCheckAt: null,
  startedAt: '2026-12-01T10:00:00.000Z',
  deadline: null,
  budget: null,
  ...p,
});

describe('progress in words', () => {
  it('drain: the count of live allocations, singular or plural, the deadline and what happens at it', () => {
    expect(drainInWords(drain({ deadline: '2026-12-01T12:00:00.000Z' }))).toBe(
      "Waiting for 2 live allocations until 2026-12-01T12:00:00.000Z; then they are force-released within the pool's disruption budget.",
    );
    expect(drainInWords(drain({ liveAllocationCount: 1 }))).toBe(
      'Waiting for 1 live allocation to end; no deadline.',
    );
    expect(
      drainInWords(
        drain({
          phase: 'waiting-for-budget',
          liveAllocationCount: 1,
          budget: { max: 1, used: 1, holders: ['node_x'] },
        }),
      ),
    ).toBe(
      "Past the deadline: waiting for 1 live allocation, waiting for a slot in the pool's disruption budget (budget 1 of 1 nodes unavailable: node_x) to force-release them.",
    );
    expect(drainInWords(drain({ phase: 'drained', liveAllocationCount: 0 }))).toBe(
      'Drained: the node holds nothing.',
    );
  });

  it('decommission: the step it is at and how many of the five are done', () => {
    expect(
      decommissionInWords({
        phase: 'cleaning-up',
        step: 'protectStorageRoots',
        stepsDone: ['revokeNodeIdentity', 'decommissionAccelerators'],
      }),
    ).toBe('Cleaning up: protecting storage roots; 2 of 5 steps done.');
    expect(
      decommissionInWords({
        phase: 'decommissioned',
        step: null,
        stepsDone: ['a', 'b', 'c', 'd', 'e'],
      }),
    ).toBe('Decommissioned: 5 of 5 steps done.');
  });

  it("purge: waiting for the node since when; the node's refusal with its reason", () => {
    const purge: PurgeProgress = {
      phase: 'waiting-for-node',
      commandId: 'cmd_1',
      refusedReason: null,
      waitingSince: '2026-12-01T10:00:00.000Z',
    };
    expect(purgeInWords(purge)).toBe(
      'Waiting for the node to take the purge command (command cmd_1) since 2026-12-01T10:00:00.000Z.',
    );
    expect(purgeInWords({ ...purge, phase: 'refused', refusedReason: 'disk busy' })).toBe(
      'The node refused the purge command (command cmd_1): disk busy.',
    );
  });

  it('remediation: the rung of the ladder, its action and until when; the queued conditions', () => {
    const remediation: RemediationProgress = {
      phase: 'attempting',
      condition: 'GpuXidError',
      attempt: 2,
      action: 'reset-gpu',
      attemptDeadline: '2026-12-01T10:05:00.000Z',
      attempts: [],
      ladder: ['restart-agent', 'reset-gpu', 'reboot'],
      queued: ['DiskPressure'],
    };
    expect(remediationInWords(remediation)).toBe(
      'Remediating GpuXidError: attempt 2 of at most 3 (ladder restart-agent → reset-gpu → reboot), reset-gpu; ' +
        'waiting for GpuXidError to clear until 2026-12-01T10:05:00.000Z. Queued after it: DiskPressure.',
    );
  });

  it('pool drain: nodes per state, how many at a time, the deadline', () => {
    const poolDrain: PoolDrainProgress = {
      phase: 'draining',
      counts: { pending: 3, draining: 2, waitingForBudget: 1, drained: 4, failed: 0 },
      nodes: { pending: [], draining: [], waitingForBudget: [], drained: [], failed: [] },
      maxConcurrent: 2,
      deadline: { after: '2h', afterMs: 7_200_000 },
      startedAt: null,
    };
    expect(poolDrainInWords(poolDrain)).toBe(
      "Draining: 3 pending, 2 draining, 1 waiting for the budget, 4 drained, 0 failed; at most 2 at a time; deadline 2h after each node's drain starts.",
    );
  });

  it('an unknown kind or a shape that is not the known one has no words (the fields are listed instead)', () => {
    expect(progressInWords('liveness', { sweeps: 3 })).toBeUndefined();
    expect(progressInWords('drain', { phase: 'waiting' })).toBeUndefined();
    expect(progressInWords('purge', { phase: 'starting', waitingSince: null })).toBe('Starting.');
  });
});
