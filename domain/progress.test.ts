import { describe, expect, it } from 'vitest';
import {
  DRAIN_MAX_SLEEP_MS,
  finalPhase,
  nextDrainCheck,
  progressInWords,
  type OperationProgress,
  type PoolDrainProgress,
  type PoolDrainWaitingFor,
} from './progress';

const NOW = Date.parse('2026-01-02T12:00:00Z');
const at = (iso: string) => `2026-01-02T${iso}:00.000Z`;
const base = { startedAt: at('11:00'), deadline: null, nextCheckAt: null };

describe('an operation in words', () => {
  it('says a recorded operation waits for a worker, whatever its kind', () => {
    for (const kind of ['drain', 'pool-drain', 'purge', 'decommission', 'remediation'] as const) {
      const pending = {
        kind,
        phase: 'waiting-for-worker',
        startedAt: null,
        deadline: null,
        nextCheckAt: null,
        waitingFor: null,
      };
      expect(progressInWords(pending as OperationProgress, NOW)).toMatch(
        /^Waiting for a worker: the request is recorded/,
      );
    }
  });

  it('says what a drain waits for, until when, and when it looks next', () => {
    const waitingFor = { allocations: 2, items: [], earliestEndsAt: at('13:00'), budget: null };
    expect(
      progressInWords(
        { kind: 'drain', phase: 'waiting', ...base, nextCheckAt: at('12:05'), waitingFor },
        NOW,
      ),
    ).toBe('Waiting for 2 live allocations (the first ends 13:00Z) to end; no deadline. Next look 12:05Z.');
    expect(
      progressInWords({ kind: 'drain', phase: 'waiting', ...base, deadline: at('14:00'), waitingFor }, NOW),
    ).toBe(
      "Waiting for 2 live allocations (the first ends 13:00Z) until 14:00Z, then what is left is released by force within the pool's disruption budget.",
    );
    const budget = { max: 1, used: 1, holders: ['node_a'] };
    expect(
      progressInWords(
        {
          kind: 'drain',
          phase: 'waiting-for-budget',
          ...base,
          waitingFor: { ...waitingFor, allocations: 1, budget },
        },
        NOW,
      ),
    ).toBe(
      "Past its deadline with 1 live allocation: waiting for a slot in the pool's disruption budget (1 of 1 nodes out: node_a) to release them by force.",
    );
    expect(progressInWords({ kind: 'drain', phase: 'drained', ...base, waitingFor }, NOW)).toBe(
      'Drained: the node holds nothing live.',
    );
  });

  it('names, past the deadline, the work it asked each scheduler to end and what each answered', () => {
    const placed = { source: null, externalId: null, endRequestedAt: null, ending: null };
    const job = (externalId: string, ending: { action: 'requeue' | 'cancel'; answer: string } | null) => ({
      id: `alloc_${externalId}`,
      endsAt: null,
      source: 'slurm:hpc1',
      externalId,
      endRequestedAt: at('11:30'),
      ending: ending && { ...ending, at: at('11:31') },
    });
    const waitingFor = {
      allocations: 2,
      items: [job('4711', { action: 'requeue', answer: 'requeued' }), job('4712', null)],
      earliestEndsAt: null,
      budget: null,
    };
    const past = { kind: 'drain', phase: 'waiting', ...base, deadline: at('11:30') } as const;
    expect(progressInWords({ ...past, nextCheckAt: at('12:05'), waitingFor }, NOW)).toBe(
      'Past its deadline: asked slurm:hpc1 to end 2: 4711 (requeue: requeued), 4712 (no answer yet). Next look 12:05Z.',
    );
    // Two schedulers, a long answer cut short, and live work beyond the listed.
    const other = {
      ...job('ns/web/uid-1', { action: 'cancel', answer: 'x'.repeat(80) }),
      source: 'k8s:east',
    };
    expect(
      progressInWords(
        { ...past, waitingFor: { ...waitingFor, allocations: 25, items: [job('4711', null), other] } },
        NOW,
      ),
    ).toBe(
      `Past its deadline: asked slurm:hpc1 to end 1: 4711 (no answer yet); asked k8s:east to end 1: ns/web/uid-1 (cancel: ${'x'.repeat(59)}…); 23 more live allocations.`,
    );
    // Before the deadline, the words say what its end will do to a scheduler's work.
    expect(
      progressInWords(
        {
          ...past,
          deadline: at('14:00'),
          waitingFor: {
            ...waitingFor,
            items: [
              { ...job('4711', null), endRequestedAt: null },
              { id: 'alloc_p', endsAt: null, ...placed },
            ],
          },
        },
        NOW,
      ),
    ).toBe(
      "Waiting for 2 live allocations until 14:00Z, then what Drydock placed is released by force within the pool's disruption budget and the schedulers are asked to end the rest.",
    );
  });

  it('names, before the deadline, the work a scheduler was asked politely to end and what it answered', () => {
    const pod = (externalId: string, ending: { action: 'evict' | 'delete'; answer: string } | null) => ({
      id: `alloc_${externalId}`,
      endsAt: null,
      source: 'kubernetes:k1',
      externalId,
      endRequestedAt: null,
      ending: ending && { ...ending, at: at('11:31') },
    });
    const blocked = 'refused: eviction blocked by PodDisruptionBudget default/web (3 of 4 available)';
    const waitingFor = {
      allocations: 3,
      items: [
        pod('default/web-1/uid', { action: 'evict', answer: blocked }),
        pod('default/web-2/uid', { action: 'evict', answer: 'evicted' }),
        pod('default/batch-1/uid', null),
      ],
      earliestEndsAt: null,
      budget: null,
    };
    const drain = { kind: 'drain', phase: 'waiting', ...base, deadline: at('12:05') } as const;
    expect(progressInWords({ ...drain, waitingFor }, NOW)).toBe(
      "Waiting for 3 live allocations until 12:05Z, then what Drydock placed is released by force within the pool's disruption budget and the schedulers are asked to end the rest; " +
        `asked kubernetes:k1 to evict 2: default/web-1/uid (evict: ${blocked.slice(0, 59)}…), default/web-2/uid (evict: evicted).`,
    );
    // Answers of several actions say `end`; no deadline reads as before.
    const mixed = [
      pod('default/web-1/uid', { action: 'evict', answer: 'evicted' }),
      pod('a/b/c', { action: 'delete', answer: 'deleted' }),
    ];
    expect(
      progressInWords(
        {
          ...drain,
          deadline: null,
          nextCheckAt: at('12:05'),
          waitingFor: { ...waitingFor, allocations: 2, items: mixed },
        },
        NOW,
      ),
    ).toBe(
      'Waiting for 2 live allocations to end; no deadline; asked kubernetes:k1 to end 2: default/web-1/uid (evict: evicted), a/b/c (delete: deleted). Next look 12:05Z.',
    );
  });

  it('names a day when a time is not within a day of now', () => {
    const waitingFor = {
      allocations: 1,
      items: [],
      earliestEndsAt: '2026-01-05T09:30:00.000Z',
      budget: null,
    };
    expect(progressInWords({ kind: 'drain', phase: 'waiting', ...base, waitingFor }, NOW)).toContain(
      'the first ends Jan 5 09:30Z',
    );
  });

  it("counts a pool drain's nodes and says its deadline", () => {
    const waitingFor = {
      counts: { pending: 30, draining: 3, waitingForBudget: 1, drained: 12, failed: 2 },
      nodes: { pending: [], draining: [], waitingForBudget: [], drained: [], failed: [] },
      maxConcurrent: 4,
      graceAfterStart: '2h',
      budget: null,
      timeline: [],
    };
    expect(progressInWords({ kind: 'pool-drain', phase: 'draining', ...base, waitingFor }, NOW)).toBe(
      "Draining: 12 drained, 4 draining (1 waiting for the budget), 30 pending, 2 failed; at most 4 at a time; deadline 2h after each node's drain starts.",
    );
  });

  it('names the nodes of a pool drain that wait for the budget, who holds it, and what lets the next go', () => {
    const holder = (nodeId: string, hostname: string, draining = false) => ({ nodeId, hostname, draining });
    const waiting = (
      budget: PoolDrainWaitingFor['budget'],
      waitingForBudget = ['node_b', 'node_c'],
    ): PoolDrainProgress => ({
      kind: 'pool-drain',
      phase: 'draining',
      ...base,
      waitingFor: {
        counts: {
          pending: 1,
          draining: 0,
          waitingForBudget: waitingForBudget.length,
          drained: 1,
          failed: 0,
        },
        nodes: { pending: ['node_d'], draining: [], waitingForBudget, drained: ['node_a'], failed: [] },
        maxConcurrent: 2,
        graceAfterStart: '0s',
        budget,
        timeline: [],
      },
    });
    const counts =
      "Draining: 1 drained, 2 draining (2 waiting for the budget), 1 pending, 0 failed; at most 2 at a time; deadline 0s after each node's drain starts.";
    // The waiting nodes by hostname (one whose hostname is not known, by its id).
    const waits = [
      { nodeId: 'node_b', hostname: 'gpu-b1' },
      { nodeId: 'node_c', hostname: 'gpu-c1' },
    ];
    // The pool drain's own drained node holds the only slot.
    expect(
      progressInWords(
        waiting({ max: 1, used: 1, holders: [holder('node_a', 'gpu-a1')], waiting: waits }),
        NOW,
      ),
    ).toBe(
      `${counts} gpu-b1, gpu-c1 wait for a slot in the pool's disruption budget: 1 of 1 nodes out, held by ` +
        'gpu-a1 (drained, still cordoned). To let the next go: uncordon it (or run a rolling maintenance, ' +
        "which puts each node back), raise the pool's maxUnavailable (at most 1 out now), or cancel the pool drain.",
    );
    // Two holders, one of them a node another drain still empties; one node waiting.
    const two = {
      max: 2,
      used: 2,
      holders: [holder('node_x', 'gpu-x9'), holder('node_a', 'gpu-a1', true)],
      waiting: waits.slice(0, 1),
    };
    expect(progressInWords(waiting(two, ['node_b']), NOW)).toContain(
      "gpu-b1 waits for a slot in the pool's disruption budget: 2 of 2 nodes out, held by gpu-x9 (drained, " +
        'still cordoned), gpu-a1 (still draining). To let the next go: uncordon one of them',
    );
    // More holders than listed: the exact count, and how many more.
    const many = { max: 25, used: 25, holders: [holder('node_a', 'gpu-a1')], waiting: [] };
    expect(progressInWords(waiting(many), NOW)).toContain(
      "node_b, node_c wait for a slot in the pool's disruption budget: 25 of 25 nodes out, held by gpu-a1 (drained, still cordoned) and 24 more.",
    );
    // A budget that lets no node out, and one with a slot just freed.
    expect(progressInWords(waiting({ max: 0, used: 0, holders: [], waiting: waits }), NOW)).toContain(
      "gpu-b1, gpu-c1 wait for a slot in the pool's disruption budget, which lets no node out (maxUnavailable 0): raise it to let them go, or cancel the pool drain.",
    );
    expect(progressInWords(waiting({ max: 1, used: 0, holders: [], waiting: waits }), NOW)).toContain(
      '0 of 1 nodes out, so a slot is free and the next look takes it.',
    );
    // Once it ended, only the counts.
    expect(
      progressInWords({ ...waiting({ max: 1, used: 1, holders: [], waiting: [] }), phase: 'failed' }, NOW),
    ).toBe('Failed: 1 drained, 2 draining (2 waiting for the budget), 1 pending, 0 failed.');
  });

  it('says what a purge, a decommission and a remediation are at', () => {
    expect(
      progressInWords(
        {
          kind: 'purge',
          phase: 'refused',
          ...base,
          waitingFor: { commandId: 'cmd_1', refusedReason: 'bad signature' },
        },
        NOW,
      ),
    ).toBe(
      'The node refused the purge command (command cmd_1): bad signature. It stays purging until it is purged again or deleted.',
    );
    expect(
      progressInWords(
        {
          kind: 'decommission',
          phase: 'cleaning-up',
          ...base,
          waitingFor: {
            step: 'protectStorageRoots',
            stepsDone: ['revokeNodeIdentity', 'decommissionAccelerators'],
          },
        },
        NOW,
      ),
    ).toBe('Cleaning up: protecting storage roots; 2 of 5 steps done.');
    expect(
      progressInWords(
        {
          kind: 'remediation',
          phase: 'attempting',
          ...base,
          waitingFor: {
            condition: 'GpuXidError',
            attempt: 1,
            action: 'reset-accelerator',
            attemptDeadline: at('12:10'),
            attempts: [],
            ladder: ['reset-accelerator', 'reboot'],
            queued: ['NicFlap'],
          },
        },
        NOW,
      ),
    ).toBe(
      'Remediating GpuXidError: attempt 1 of at most 2 (ladder reset-accelerator → reboot), reset-accelerator; waiting for GpuXidError to clear until 12:10Z. Queued after it: NicFlap.',
    );
  });
});

describe("a drain's next look", () => {
  it('is at the earliest end or the deadline, never sooner than 250 ms nor later than 5 minutes', () => {
    expect(nextDrainCheck(NOW, at('12:02'), null)).toBe(at('12:02'));
    expect(nextDrainCheck(NOW, at('12:02'), at('12:01'))).toBe(at('12:01'));
    expect(nextDrainCheck(NOW, null, null)).toBe(new Date(NOW + DRAIN_MAX_SLEEP_MS).toISOString());
    expect(nextDrainCheck(NOW, at('11:00'), null)).toBe(new Date(NOW + 250).toISOString());
  });

  it('is not sooner for a deadline the look found passed: it acted on it, and a release or a slot wakes it', () => {
    // Waiting for the budget: an end or a freed slot helps, not the deadline.
    expect(nextDrainCheck(NOW, at('12:03'), at('11:00'))).toBe(at('12:03'));
    // Waiting for a scheduler to end its work: its release or its answer wakes the drain.
    expect(nextDrainCheck(NOW, null, at('11:00'))).toBe(new Date(NOW + DRAIN_MAX_SLEEP_MS).toISOString());
    expect(nextDrainCheck(NOW, null, new Date(NOW).toISOString())).toBe(
      new Date(NOW + DRAIN_MAX_SLEEP_MS).toISOString(),
    );
  });
});

describe('the phase an operation ends in', () => {
  it('is named for its kind', () => {
    expect(finalPhase('drain', 'succeeded')).toBe('drained');
    expect(finalPhase('purge', 'succeeded')).toBe('purged');
    expect(finalPhase('decommission', 'succeeded')).toBe('decommissioned');
    expect(finalPhase('remediation', 'failed')).toBe('escalated');
    expect(finalPhase('pool-drain', 'failed')).toBe('failed');
    expect(finalPhase('drain', 'cancelled')).toBe('cancelled');
  });
});
