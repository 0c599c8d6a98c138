import type { Schemas } from '@drydock/client';
import { jsx } from 'hono/jsx/jsx-runtime';
import { describe, expect, it } from 'vitest';
import { RollingGantt } from './rolling-gantt';

const START = Date.parse('2026-12-05T10:00:00.000Z');
const at = (minutes: number) => new Date(START + minutes * 60_000).toISOString();

type Step = {
  step: string;
  outcome: 'done' | 'failed' | 'cancelled' | null;
  startedAt: string | null;
  endedAt: string | null;
  reason?: string;
};

const maintenance = (id: string, steps: Step[], step: number, status: string): Schemas['Operation'] =>
  ({
    id,
    kind: 'maintenance',
    status,
    createdAt: at(0),
    completedAt: status === 'running' ? null : at(9),
    progress: {
      kind: 'maintenance',
      phase: 'running',
      startedAt: at(0),
      deadline: null,
      nextCheckAt: null,
      waitingFor: { step, steps },
    },
  }) as unknown as Schemas['Operation'];

const children = new Map([
  [
    'op_a',
    maintenance(
      'op_a',
      [
        { step: 'drain', outcome: 'done', startedAt: at(0), endedAt: at(2) },
        { step: 'reboot', outcome: 'done', startedAt: at(2), endedAt: at(5) },
        { step: 'uncordon', outcome: 'done', startedAt: at(5), endedAt: at(5) },
      ],
      3,
      'succeeded',
    ),
  ],
  [
    'op_b',
    maintenance(
      'op_b',
      [
        { step: 'drain', outcome: 'done', startedAt: at(5), endedAt: at(6) },
        { step: 'reboot', outcome: null, startedAt: at(6), endedAt: null },
        { step: 'uncordon', outcome: null, startedAt: null, endedAt: null },
      ],
      1,
      'running',
    ),
  ],
  [
    'op_c',
    maintenance(
      'op_c',
      [
        { step: 'run:driver-upgrade', outcome: 'failed', startedAt: at(1), endedAt: at(3), reason: 'exit 1' },
        { step: 'uncordon', outcome: null, startedAt: null, endedAt: null },
      ],
      0,
      'failed',
    ),
  ],
]);

const rolling = (completedAt: string | null): Schemas['Operation'] =>
  ({
    id: 'op_roll',
    kind: 'pool-maintenance',
    status: completedAt ? 'failed' : 'running',
    createdAt: at(0),
    completedAt,
    progress: {
      kind: 'pool-maintenance',
      phase: 'maintaining',
      startedAt: at(0),
      deadline: null,
      nextCheckAt: null,
      waitingFor: {
        counts: { pending: 1, running: 1, succeeded: 1, failed: 1, cancelled: 0 },
        atStep: [0, 1, 0],
        doneStep: [2, 1, 1],
        steps: ['drain', 'reboot', 'uncordon'],
        nodes: [
          {
            nodeId: 'node_a',
            hostname: 'gpu-a1',
            operationId: 'op_a',
            status: 'succeeded',
            step: null,
            reason: null,
          },
          {
            nodeId: 'node_b',
            hostname: 'gpu-b1',
            operationId: 'op_b',
            status: 'running',
            step: 'reboot',
            reason: null,
          },
          {
            nodeId: 'node_c',
            hostname: 'gpu-c1',
            operationId: 'op_c',
            status: 'failed',
            step: 'run:driver-upgrade',
            reason: 'exit 1',
          },
        ],
        maxConcurrent: 2,
        maxFailures: 2,
        failuresSinceResume: 1,
        paused: false,
      },
    },
  }) as unknown as Schemas['Operation'];

describe('rolling maintenance node by node (Gantt)', () => {
  it('draws a row per node by hostname, a bar per step that began, the UTC axis and a line at now', () => {
    const html = String(
      jsx(RollingGantt, { rolling: { operation: rolling(null), children }, now: START + 10 * 60_000 }),
    );
    expect(html.match(/<g class="gantt-row"/g)).toHaveLength(3);
    // 3 + 2 + 1 bars: the steps not begun have none.
    expect(html.match(/<rect data-step=/g)).toHaveLength(6);
    expect(html).toContain(
      '<a href="/console/nodes/node_b"><title>node_b</title><text x="144" y="68" text-anchor="end" fill="currentColor">gpu-b1</text></a>',
    );
    expect(html).toContain('<title>gpu-a1: reboot done 10:02:00 → 10:05:00</title>');
    expect(html).toContain('<title>gpu-b1: reboot running since 10:06:00</title>');
    expect(html).toContain('<title>gpu-c1: run:driver-upgrade failed 10:01:00 → 10:03:00</title>');
    // Coloured by the step, red when it failed: the reboot running to now (10 minutes across 598 units).
    expect(html).toMatch(
      /<rect data-step="reboot" data-state="running" x="508.8" width="239.2"[^>]*fill="#b45309"/,
    );
    expect(html).toMatch(/<rect data-step="run:driver-upgrade" data-state="failed"[^>]*fill="#b91c1c"/);
    expect(html).toContain('>now</text>');
    expect(html).toContain('>reboot</text>');
    expect(html).toContain('<desc id="rolling-op_roll-desc">3 nodes from 10:00:00 to now UTC;');
    // The table says the same in words, the steps not begun too.
    expect(html).toContain(
      '<td>drain done 10:05:00 → 10:06:00; reboot running since 10:06:00; uncordon not started</td>',
    );
    expect(html).not.toContain('style=');
  });

  it('ends with a finished rolling maintenance, with no line at now', () => {
    const html = String(
      jsx(RollingGantt, { rolling: { operation: rolling(at(9)), children }, now: START + 60 * 60_000 }),
    );
    expect(html).not.toContain('>now</text>');
    expect(html).toContain('3 nodes from 10:00:00 to 10:09:00 UTC');
  });
});
