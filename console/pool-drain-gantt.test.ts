import type { Schemas } from '@drydock/client';
import { jsx } from 'hono/jsx/jsx-runtime';
import { describe, expect, it } from 'vitest';
import type { PoolDrainNodeTimeline } from '../domain/pool-drain-timeline';
import { PoolDrainGantt } from './pool-drain-gantt';

const START = Date.parse('2026-12-05T10:00:00.000Z');
const at = (minutes: number) => new Date(START + minutes * 60_000).toISOString();

const rows: PoolDrainNodeTimeline[] = [
  {
    nodeId: 'node_a',
    hostname: 'gpu-a1',
    operationId: 'op_a',
    spans: [
      { state: 'draining', from: at(0), to: at(4) },
      { state: 'forced-release', from: at(4), to: at(5) },
      { state: 'drained', from: at(5), to: null },
    ],
  },
  {
    nodeId: 'node_b',
    hostname: 'gpu-b1',
    operationId: 'op_b',
    spans: [
      { state: 'waiting', from: at(0), to: at(2) },
      { state: 'draining', from: at(2), to: at(6) },
      { state: 'waiting-for-budget', from: at(6), to: null },
    ],
  },
  {
    nodeId: 'node_c',
    hostname: 'gpu-c1',
    operationId: null,
    spans: [{ state: 'waiting', from: at(0), to: null }],
  },
];

const poolDrain = (completedAt: string | null): Schemas['Operation'] =>
  ({
    id: 'op_pool',
    kind: 'pool-drain',
    status: completedAt ? 'cancelled' : 'running',
    completedAt,
    progress: {
      kind: 'pool-drain',
      phase: completedAt ? 'cancelled' : 'draining',
      startedAt: at(0),
      deadline: null,
      nextCheckAt: null,
      waitingFor: {
        counts: { pending: 1, draining: 1, waitingForBudget: 1, drained: 1, failed: 0 },
        nodes: { pending: [], draining: [], waitingForBudget: [], drained: [], failed: [] },
        maxConcurrent: 2,
        graceAfterStart: null,
        budget: null,
        timeline: rows,
      },
    },
  }) as unknown as Schemas['Operation'];

describe('pool drain timeline (Gantt)', () => {
  it('draws a row per node by hostname, a titled bar per span, the UTC axis and a line at now', () => {
    const html = String(jsx(PoolDrainGantt, { operation: poolDrain(null), now: START + 10 * 60_000 }));
    expect(html.match(/<g class="gantt-row"/g)).toHaveLength(3);
    expect(html.match(/<rect data-state=/g)).toHaveLength(7);
    for (const state of ['draining', 'forced-release', 'drained', 'waiting', 'waiting-for-budget']) {
      expect(html).toContain(`<rect data-state="${state}"`);
    }
    // Each hostname links to its node, its id in the title.
    expect(html).toContain(
      '<a href="/console/nodes/node_b"><title>node_b</title><text x="144" y="68" text-anchor="end" fill="currentColor">gpu-b1</text></a>',
    );
    expect(html).toContain('<title>gpu-b1: waiting for the budget since 10:06:00</title>');
    expect(html).toContain('<title>gpu-a1: forced release 10:04:00 → 10:05:00</title>');
    // Ten minutes across 598 units: 10:04 is 40 % of the way from the hostnames (150).
    expect(html).toMatch(/<rect data-state="forced-release" x="389.2" width="59.8"/);
    // The axis every 2 minutes, in UTC; the line at now; a legend in words.
    for (const tick of ['10:00', '10:02', '10:10']) expect(html).toContain(`>${tick}</text>`);
    expect(html).toContain('>now</text>');
    expect(html).toContain('>waiting for the budget</text>');
    expect(html).toContain('<desc id="gantt-op_pool-desc">3 nodes from 10:00:00 to now UTC;');
    // The table says the same in words.
    expect(html).toContain(
      '<td>waiting for its turn 10:00:00 → 10:02:00; draining 10:02:00 → 10:06:00; waiting for the budget since 10:06:00</td>',
    );
    expect(html).not.toContain('style=');
  });

  it('ends at the end of a finished pool drain, with no line at now; no timeline draws nothing', () => {
    const html = String(jsx(PoolDrainGantt, { operation: poolDrain(at(8)), now: START + 60 * 60_000 }));
    expect(html).not.toContain('>now</text>');
    expect(html).toContain('3 nodes from 10:00:00 to 10:08:00 UTC');
    // An open span ends with the drawing.
    expect(html).toMatch(/<rect data-state="drained" x="523.8" width="224.3"/);
    const none = poolDrain(null);
    (none.progress as { waitingFor: { timeline: unknown[] } }).waitingFor.timeline = [];
    expect(String(jsx(PoolDrainGantt, { operation: none, now: START }))).toBe('');
  });
});
