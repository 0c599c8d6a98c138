import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVENESS, livenessStep, type LivenessSettings } from './liveness';

type Node = Parameters<typeof livenessStep>[0];
type Step = ReturnType<typeof livenessStep>;

const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(T0 + ms);

/** Timings as tests and deployments set them: either of lease and session timeout may be the shorter. */
const settingsArb: fc.Arbitrary<LivenessSettings> = fc.record({
  sweepEveryMs: fc.integer({ min: 1, max: 10_000 }),
  leaseMs: fc.integer({ min: 1, max: 120_000 }),
  sessionTimeoutMs: fc.integer({ min: 1, max: 120_000 }),
  outageMs: fc.integer({ min: 1, max: 120_000 }),
  graceMs: fc.integer({ min: 1, max: 600_000 }),
});
const lostAfterArb = fc.option(fc.integer({ min: 1, max: 120_000 }), { nil: null });

/**
 * The states the system writes: the first heartbeat of a session makes a node connected and alive
 * together, the sweep makes it unreachable and disconnected together, goodbye makes it offline.
 */
const nodeArb: fc.Arbitrary<Node> = fc.oneof(
  fc.record({
    liveness: fc.constant('alive' as const),
    connectivity: fc.constantFrom('connected' as const, 'disconnected' as const),
    seenAt: fc.integer({ min: 0, max: 60_000 }).map(at),
    unreachableSince: fc.constant(null),
    lostAfterMs: lostAfterArb,
  }),
  fc.integer({ min: 0, max: 60_000 }).chain((seen) =>
    fc.record({
      liveness: fc.constantFrom('unreachable' as const, 'lost' as const),
      connectivity: fc.constant('disconnected' as const),
      seenAt: fc.constant(at(seen)),
      unreachableSince: fc.integer({ min: seen, max: seen + 120_000 }).map(at),
      lostAfterMs: lostAfterArb,
    }),
  ),
  fc.record({
    liveness: fc.constantFrom('offline' as const, 'decommissioned' as const),
    connectivity: fc.constant('disconnected' as const),
    seenAt: fc.integer({ min: 0, max: 60_000 }).map(at),
    unreachableSince: fc.constant(null),
    lostAfterMs: lostAfterArb,
  }),
);

const RANK: Record<NonNullable<Step> | 'none', number> = { none: 0, disconnect: 1, unreachable: 2, lost: 3 };
const rank = (step: Step) => RANK[step ?? 'none'];

/** How far a node has fallen: connected, disconnected, unreachable, lost (offline is apart). */
function classification(node: Node): number {
  if (node.liveness === 'lost') return 3;
  if (node.liveness === 'unreachable') return 2;
  return node.connectivity === 'connected' ? 0 : 1;
}

/** What the sweep writes for a step (activities/liveness.ts), reduced to the columns the rule reads. */
function sweep(node: Node, now: Date, settings: LivenessSettings): Node {
  const step = livenessStep(node, now, settings);
  if (step === 'unreachable') {
    return { ...node, liveness: 'unreachable', connectivity: 'disconnected', unreachableSince: now };
  }
  if (step === 'disconnect') return { ...node, connectivity: 'disconnected' };
  if (step === 'lost') return { ...node, liveness: 'lost' };
  return node;
}

/** The first heartbeat of a session (db/liveness.ts `connectNode`). */
const heartbeat = (node: Node, now: Date): Node => ({
  ...node,
  liveness: 'alive',
  connectivity: 'connected',
  seenAt: now,
  unreachableSince: null,
});

const RUNS = { numRuns: 300 };

describe('liveness rule (properties)', () => {
  it('is monotonic in time: a later sweep of the same node never asks for less', () => {
    fc.assert(
      fc.property(
        nodeArb,
        settingsArb,
        fc.nat({ max: 300_000 }),
        fc.nat({ max: 300_000 }),
        (node, settings, a, b) => {
          const [early, late] = a <= b ? [a, b] : [b, a];
          const base = node.seenAt.getTime() - T0;
          expect(rank(livenessStep(node, at(base + early), settings))).toBeLessThanOrEqual(
            rank(livenessStep(node, at(base + late), settings)),
          );
        },
      ),
      RUNS,
    );
  });

  it('silence only moves a node forward: connected → disconnected → unreachable → lost, never back', () => {
    fc.assert(
      fc.property(
        nodeArb,
        settingsArb,
        fc.array(fc.nat({ max: 60_000 }), { minLength: 1, maxLength: 20 }),
        (start, settings, gaps) => {
          let node = start;
          let now = start.seenAt.getTime() - T0;
          for (const gap of gaps) {
            now += gap;
            const next = sweep(node, at(now), settings);
            expect(classification(next)).toBeGreaterThanOrEqual(classification(node));
            // Silence never brings a node back, nor moves an offline or decommissioned one.
            if (node.liveness === 'offline' || node.liveness === 'decommissioned') expect(next).toBe(node);
            expect(next.seenAt).toBe(node.seenAt);
            node = next;
          }
        },
      ),
      RUNS,
    );
  });

  it('a heartbeat returns any node to connected, and no sweep moves it within the shorter timeout', () => {
    fc.assert(
      fc.property(
        nodeArb.filter((n) => n.liveness !== 'decommissioned'),
        settingsArb,
        fc.nat(),
        (node, settings, d) => {
          const now = at(node.seenAt.getTime() - T0 + 500_000);
          const back = heartbeat(node, now);
          expect(classification(back)).toBe(0);
          const within = d % (Math.min(settings.leaseMs, settings.sessionTimeoutMs) + 1);
          expect(livenessStep(back, at(now.getTime() - T0 + within), settings)).toBeNull();
        },
      ),
      RUNS,
    );
  });

  it('the session timeout and the lease are exceeded only one millisecond past them', () => {
    fc.assert(
      fc.property(settingsArb, fc.nat({ max: 60_000 }), lostAfterArb, (settings, seen, lostAfterMs) => {
        const connected: Node = {
          liveness: 'alive',
          connectivity: 'connected',
          seenAt: at(seen),
          unreachableSince: null,
          lostAfterMs,
        };
        const disconnected: Node = { ...connected, connectivity: 'disconnected' };
        const { leaseMs, sessionTimeoutMs } = settings;
        const ageOf = (ms: number) => at(seen + ms);
        // A connected node: whichever timeout comes first decides, at its boundary millisecond.
        const first = Math.min(leaseMs, sessionTimeoutMs);
        expect(livenessStep(connected, ageOf(first), settings)).toBeNull();
        expect(livenessStep(connected, ageOf(first + 1), settings)).toBe(
          leaseMs <= sessionTimeoutMs ? 'unreachable' : 'disconnect',
        );
        expect(livenessStep(connected, ageOf(leaseMs + 1), settings)).toBe('unreachable');
        // A disconnected node is only waiting for the lease.
        expect(livenessStep(disconnected, ageOf(leaseMs), settings)).toBeNull();
        expect(livenessStep(disconnected, ageOf(leaseMs + 1), settings)).toBe('unreachable');
      }),
      RUNS,
    );
  });

  it('lost comes one millisecond past lostAfter, and never without it', () => {
    fc.assert(
      fc.property(
        settingsArb,
        fc.nat({ max: 60_000 }),
        fc.nat({ max: 60_000 }),
        fc.integer({ min: 1, max: 120_000 }),
        (settings, seen, wait, lostAfterMs) => {
          const since = seen + wait;
          const unreachable: Node = {
            liveness: 'unreachable',
            connectivity: 'disconnected',
            seenAt: at(seen),
            unreachableSince: at(since),
            lostAfterMs,
          };
          expect(livenessStep(unreachable, at(since + lostAfterMs), settings)).toBeNull();
          expect(livenessStep(unreachable, at(since + lostAfterMs + 1), settings)).toBe('lost');
          // A pool without lostAfter keeps its unreachable nodes unreachable, however long.
          const kept = { ...unreachable, lostAfterMs: null };
          expect(livenessStep(kept, at(since + lostAfterMs + 10_000_000), settings)).toBeNull();
        },
      ),
      RUNS,
    );
  });

  it('nothing beyond lost: lost, offline and decommissioned nodes are never stepped by silence', () => {
    fc.assert(
      fc.property(
        nodeArb.filter((n) => ['lost', 'offline', 'decommissioned'].includes(n.liveness)),
        settingsArb,
        fc.nat({ max: 10_000_000 }),
        (node, settings, later) => {
          expect(livenessStep(node, at(node.seenAt.getTime() - T0 + later), settings)).toBeNull();
        },
      ),
      RUNS,
    );
  });
});

describe('liveness defaults', () => {
  it('disconnect a connected node past 25 s, make it unreachable past 40 s', () => {
    const node: Node = {
      liveness: 'alive',
      connectivity: 'connected',
      seenAt: at(0),
      unreachableSince: null,
      lostAfterMs: null,
    };
    expect(livenessStep(node, at(25_000), DEFAULT_LIVENESS)).toBeNull();
    expect(livenessStep(node, at(25_001), DEFAULT_LIVENESS)).toBe('disconnect');
    const disconnected = { ...node, connectivity: 'disconnected' as const };
    expect(livenessStep(disconnected, at(40_000), DEFAULT_LIVENESS)).toBeNull();
    expect(livenessStep(disconnected, at(40_001), DEFAULT_LIVENESS)).toBe('unreachable');
  });
});
