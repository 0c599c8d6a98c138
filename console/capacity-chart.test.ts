import { jsx } from 'hono/jsx/jsx-runtime';
import { describe, expect, it } from 'vitest';
import { CapacityChart, summaryOf, type CapacityHistory } from './capacity-chart';

const NOW = Date.parse('2026-12-05T18:00:00.000Z');

const point = (at: string, schedulable: number, cordoned: number, unreachable = 0) => ({
  at,
  total: schedulable + cordoned + unreachable,
  schedulable,
  cordoned,
  unhealthy: 0,
  maintenance: 0,
  unreachable,
});

const day = (points: CapacityHistory['points']): CapacityHistory => ({
  poolId: 'pool-h100',
  window: '24h',
  stepSeconds: 600,
  points,
});

describe('capacity chart', () => {
  it('draws one stacked bar per recorded step, each bucket with its count in words', () => {
    const history = day([
      point('2026-12-05T14:00:00.000Z', 23, 12, 5),
      point('2026-12-05T14:10:00.000Z', 38, 2),
      point('2026-12-05T17:50:00.000Z', 40, 0),
    ]);
    const html = String(jsx(CapacityChart, { history, now: NOW }));
    expect(html.match(/<g class="chart-step"/g)).toHaveLength(3);
    // Only the buckets a step has are drawn: 3 + 2 + 1 rectangles.
    expect(html.match(/<rect data-bucket=/g)).toHaveLength(6);
    expect(html).toContain('<title>Dec 5 14:00 UTC: 5 of 40 unreachable</title>');
    // Its title and description name it to a screen reader; the summary is under it too.
    expect(html).toContain('aria-labelledby="capacity-24h-title capacity-24h-desc"');
    expect(html).toContain(
      '<title id="capacity-24h-title">Capacity of pool pool-h100, last 24 hours</title>',
    );
    const summary =
      'Last 24 hours: lowest schedulable 58 % (23 of 40 nodes) at Dec 5 14:00 UTC; latest 100 % (40 of 40 nodes) at 17:50 UTC.';
    expect(html).toContain(`<desc id="capacity-24h-desc">${summary}</desc>`);
    expect(html).toContain(`<figcaption>${summary}</figcaption>`);
    // The time axis in UTC: every 6 hours of the window; the legend names each colour.
    for (const tick of ['00:00', '06:00', '12:00', '18:00']) expect(html).toContain(`>${tick}</text>`);
    expect(html).toContain('time (UTC)');
    for (const bucket of ['schedulable', 'cordoned', 'unhealthy', 'maintenance', 'unreachable']) {
      expect(html).toContain(`>${bucket}</text>`);
    }
    // Every step's numbers as a table.
    expect(html).toContain(
      '<td><time datetime="2026-12-05T14:10:00.000Z">Dec 5 14:10</time></td><td>40</td><td>38</td><td>2</td><td>0</td><td>0</td><td>0</td>',
    );
    // No inline style: the colours are SVG presentation attributes (the CSP allows no style).
    expect(html).not.toContain('style=');
  });

  it('places a step by its time in the window and leaves a step with no minute recorded empty', () => {
    const html = String(
      jsx(CapacityChart, {
        history: day([point('2026-12-04T18:00:00.000Z', 1, 0), point('2026-12-05T06:00:00.000Z', 1, 0)]),
        now: NOW,
      }),
    );
    // The window's start is the plot's left edge (44), its middle half-way across 668 units.
    expect(html).toMatch(/data-at="2026-12-04T18:00:00.000Z"[^>]*><rect data-bucket="schedulable" x="44.0"/);
    expect(html).toMatch(/data-at="2026-12-05T06:00:00.000Z"[^>]*><rect data-bucket="schedulable" x="378.0"/);
  });

  it('says the week by day, and an empty history says it fills in each minute', () => {
    const week: CapacityHistory = { ...day([point('2026-12-01T10:00:00.000Z', 3, 1)]), window: '7d' };
    const html = String(jsx(CapacityChart, { history: week, now: NOW }));
    for (const tick of ['Nov 29', 'Dec 1', 'Dec 5']) expect(html).toContain(`>${tick}</text>`);
    expect(summaryOf(week)).toBe(
      'Last 7 days: lowest schedulable 75 % (3 of 4 nodes) at Dec 1 10:00 UTC; latest 75 % (3 of 4 nodes) at 10:00 UTC.',
    );
    const empty = String(jsx(CapacityChart, { history: day([]), now: NOW }));
    expect(empty).toContain('No capacity recorded for the last 24 hours yet');
    expect(empty).toContain('fills in as it does');
    expect(empty).not.toContain('<svg');
  });
});
