import type { Schemas } from '@drydock/client';
import { jsx } from 'hono/jsx/jsx-runtime';
import { describe, expect, it } from 'vitest';
import { DrainTimeline } from './drain-timeline';

const START = Date.parse('2026-12-05T10:00:00.000Z');
const at = (minutes: number) => new Date(START + minutes * 60_000).toISOString();

const allocation = (id: string, fields: Partial<Schemas['Allocation']>): Schemas['Allocation'] => ({
  id,
  nodeId: 'node_a',
  tenantId: 'acme',
  kind: 'job',
  createdAt: at(-60),
  endsAt: null,
  releasedAt: null,
  releasedBy: null,
  source: null,
  externalId: null,
  endRequestedAt: null,
  ending: null,
  live: false,
  ...fields,
});

const allocations = [
  // Ended before the drain began: not drawn.
  allocation('alloc_before', { createdAt: at(-90), releasedAt: at(-30), releasedBy: 'key:ops' }),
  // Released by its owner while the drain waited.
  allocation('alloc_ended', { releasedAt: at(3), releasedBy: 'key:ops' }),
  // Released by force at the deadline.
  allocation('alloc_forced', { releasedAt: at(20), releasedBy: 'system:drain' }),
  // Held now, its end after the deadline: released by force then.
  allocation('alloc_long', { endsAt: at(60), live: true, source: 'slurm:hpc1', externalId: '4242' }),
  // Held now, ending before the deadline.
  allocation('alloc_short', { endsAt: at(12), live: true }),
  // Held now with no end: the deadline releases it too.
  allocation('alloc_open', { live: true }),
];

const drain = (completedAt: string | null): Schemas['Operation'] =>
  ({
    id: 'op_drain',
    kind: 'drain',
    status: completedAt ? 'succeeded' : 'running',
    createdAt: at(0),
    completedAt,
    progress: {
      kind: 'drain',
      phase: completedAt ? 'drained' : 'waiting',
      startedAt: at(0),
      deadline: at(30),
      nextCheckAt: null,
      waitingFor: null,
    },
  }) as unknown as Schemas['Operation'];

describe("a drain's allocations against its deadline", () => {
  it('draws one row per allocation held while it drains, the deadline line, now, and the same as a table', () => {
    const html = String(
      jsx(DrainTimeline, {
        operation: drain(null),
        allocations: { items: allocations, more: false },
        now: START + 10 * 60_000,
      }),
    );
    expect(html.match(/<g class="gantt-row"/g)).toHaveLength(5);
    expect(html).not.toContain('alloc_before');
    // Earliest end first: ended, short (expected at 10:12), forced, then the one held to the deadline, then no end.
    const order = [...html.matchAll(/<g class="gantt-row" data-allocation="(\w+)"/g)].map((m) => m[1]);
    expect(order).toEqual(['alloc_ended', 'alloc_short', 'alloc_forced', 'alloc_long', 'alloc_open']);
    expect(html).toContain('<title>job …_ended: 10:00:00 → 10:03:00, ended</title>');
    expect(html).toContain('<title>job …forced: 10:00:00 → 10:20:00, released by force</title>');
    // Held past the deadline: expected to end when the deadline releases it.
    expect(html).toContain('<title>slurm:hpc1 4242: expected to end 10:30:00</title>');
    expect(html).toContain('<title>job …_short: expected to end 10:12:00</title>');
    expect(html).toContain('>deadline 10:30</text>');
    expect(html).toContain('>now</text>');
    expect(html).toContain('role="img"');
    expect(html).toContain(
      '<desc id="drain-op_drain-desc">5 allocations from 10:00:00 to now UTC, the deadline at 10:30:00;',
    );
    expect(html).toContain('<td>released by force at the deadline 10:30:00</td>');
    expect(html).toContain('<title>job …c_open: expected to end 10:30:00</title>');
    expect(html).not.toContain('style=');
  });

  it('a finished drain has no line at now and nothing expected; no allocation says so in words', () => {
    const html = String(
      jsx(DrainTimeline, {
        operation: drain(at(20)),
        allocations: { items: allocations.slice(0, 3), more: false },
        now: START + 60 * 60_000,
      }),
    );
    expect(html).not.toContain('>now</text>');
    expect(html).not.toContain('data-state="expected"');
    expect(html.match(/<g class="gantt-row"/g)).toHaveLength(2);
    const none = String(
      jsx(DrainTimeline, { operation: drain(at(20)), allocations: { items: [], more: false }, now: START }),
    );
    expect(none).toContain('No allocation held the node while this drain ran.');
  });

  it('without a deadline the drain only waits: an allocation with no end has no end drawn', () => {
    const op = drain(null);
    (op.progress as { deadline: string | null }).deadline = null;
    const html = String(
      jsx(DrainTimeline, {
        operation: op,
        allocations: { items: allocations.slice(4), more: false },
        now: START + 10 * 60_000,
      }),
    );
    expect(html).not.toContain('deadline 10:30');
    expect(html).toContain('>no end</text>');
    expect(html).toContain('no deadline (the drain only waits)');
    expect(html).toContain('<td>no end: it holds the node until it is released</td>');
  });
});
