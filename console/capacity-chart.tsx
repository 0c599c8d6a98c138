import { CAPACITY_HISTORY_WINDOWS } from '../domain/capacity';
import type { Answer } from '@drydock/client';
import { BUCKET_COLOURS, BUCKET_ORDER as STACK, Legend, utcDay, utcTime } from './svg';

/** A pool's capacity over a window, as `GET /v1/pools/{id}/capacity/history` answers it. */
export type CapacityHistory = Answer<'get', '/v1/pools/{id}/capacity/history'>;
type Point = CapacityHistory['points'][number];

const WINDOW_WORDS = { '1h': 'last hour', '24h': 'last 24 hours', '7d': 'last 7 days' } as const;

// The drawing's own units (it scales to its box): the plot, and room for the legend and the axes.
const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 44;
const RIGHT = 8;
const TOP = 30;
const BOTTOM = 34;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;

/**
 * A pool's capacity over a window as stacked bars, one a step (schedulable at the bottom, then
 * each bucket that cannot take work), the time axis in UTC, a legend in colour and words, the
 * summary as the drawing's description and under it, and every step's numbers in a table.
 * A step with no minute recorded is a gap, as the API leaves it out.
 */
export function CapacityChart(props: { history: CapacityHistory; now: number }) {
  const { history, now } = props;
  const words = WINDOW_WORDS[history.window];
  if (history.points.length === 0) {
    return (
      <p class="muted capacity-empty" data-window={history.window}>
        No capacity recorded for the {words} yet: a running worker records the pool's counts each minute, and
        this history fills in as it does.
      </p>
    );
  }
  const span = CAPACITY_HISTORY_WINDOWS[history.window].minutes * 60_000;
  const start = now - span;
  const x = (ms: number) => LEFT + ((ms - start) / span) * PLOT_W;
  const barWidth = Math.max(1, (history.stepSeconds * 1000 * PLOT_W) / span - 1);
  const top = Math.max(1, ...history.points.map((p) => p.total));
  const y = (count: number) => TOP + PLOT_H - (count / top) * PLOT_H;
  const summary = summaryOf(history, words);
  const titleId = `capacity-${history.window}-title`;
  const descId = `capacity-${history.window}-desc`;
  return (
    <figure class="chart capacity-chart" data-window={history.window}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width="100%"
        role="img"
        aria-labelledby={`${titleId} ${descId}`}
        font-size="11"
      >
        <title id={titleId}>{`Capacity of pool ${history.poolId}, ${words}`}</title>
        <desc id={descId}>{summary}</desc>
        <Legend
          left={LEFT}
          items={STACK.map((bucket) => ({ colour: BUCKET_COLOURS[bucket], words: bucket }))}
        />
        <YAxis top={top} y={y} />
        <TimeAxis start={start} end={now} window={history.window} x={x} />
        {history.points.map((point) => (
          <Bar point={point} x={x(Date.parse(point.at))} width={barWidth} y={y} />
        ))}
      </svg>
      <figcaption>{summary}</figcaption>
      <details>
        <summary>Every step's numbers ({history.points.length})</summary>
        <table class="chart-numbers">
          <thead>
            <tr>
              <th>Step (UTC)</th>
              <th>Total</th>
              {STACK.map((bucket) => (
                <th>{bucket}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {history.points.map((point) => (
              <tr>
                <td>
                  <time datetime={point.at}>{`${utcDay(point.at)} ${utcTime(point.at)}`}</time>
                </td>
                <td>{point.total}</td>
                {STACK.map((bucket) => (
                  <td>{point[bucket]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** One step: its buckets stacked, each with its count in words on hover (`<title>`). */
function Bar(props: { point: Point; x: number; width: number; y: (count: number) => number }) {
  const { point } = props;
  let below = 0;
  return (
    <g class="chart-step" data-at={point.at} data-total={String(point.total)}>
      {STACK.filter((bucket) => point[bucket] > 0).map((bucket) => {
        const from = below;
        below += point[bucket];
        return (
          <rect
            data-bucket={bucket}
            x={props.x.toFixed(1)}
            width={props.width.toFixed(1)}
            y={props.y(below).toFixed(1)}
            height={(props.y(from) - props.y(below)).toFixed(1)}
            fill={BUCKET_COLOURS[bucket]}
          >
            <title>{`${utcDay(point.at)} ${utcTime(point.at)} UTC: ${point[bucket]} of ${point.total} ${bucket}`}</title>
          </rect>
        );
      })}
    </g>
  );
}

/** Node counts: 0, half-way and the most nodes any step had, with light grid lines. */
function YAxis(props: { top: number; y: (count: number) => number }) {
  const ticks = [...new Set([0, Math.round(props.top / 2), props.top])];
  return (
    <g class="chart-axis">
      {ticks.map((count) => (
        <g>
          <line
            x1={LEFT}
            x2={WIDTH - RIGHT}
            y1={props.y(count)}
            y2={props.y(count)}
            stroke="#9ca3af"
            stroke-width="0.5"
          />
          <text x={LEFT - 4} y={props.y(count) + 4} text-anchor="end" fill="currentColor">
            {count}
          </text>
        </g>
      ))}
      <text x={4} y={TOP - 6} fill="currentColor">
        nodes
      </text>
    </g>
  );
}

/** The window's hours (every 6 h, or each midnight for a week), in UTC. */
function TimeAxis(props: {
  start: number;
  end: number;
  window: CapacityHistory['window'];
  x: (ms: number) => number;
}) {
  const every = props.window === '7d' ? 86_400_000 : props.window === '24h' ? 6 * 3_600_000 : 15 * 60_000;
  const ticks: number[] = [];
  for (let at = Math.ceil(props.start / every) * every; at <= props.end; at += every) ticks.push(at);
  const label = (ms: number) => {
    const iso = new Date(ms).toISOString();
    return props.window === '7d' ? utcDay(iso) : utcTime(iso);
  };
  const base = TOP + PLOT_H;
  return (
    <g class="chart-axis">
      <line x1={LEFT} x2={WIDTH - RIGHT} y1={base} y2={base} stroke="currentColor" stroke-width="1" />
      {ticks.map((at) => (
        <g>
          <line x1={props.x(at)} x2={props.x(at)} y1={base} y2={base + 4} stroke="currentColor" />
          <text x={props.x(at)} y={base + 16} text-anchor="middle" fill="currentColor">
            {label(at)}
          </text>
        </g>
      ))}
      <text x={WIDTH - RIGHT} y={HEIGHT - 2} text-anchor="end" fill="currentColor">
        time (UTC)
      </text>
    </g>
  );
}

/**
 * The window in one sentence: the lowest share of schedulable nodes and when, and the latest —
 * "Last 24 hours: lowest schedulable 58 % (23 of 40 nodes) at Dec 4 14:00 UTC; latest 100 % (40 of 40)."
 */
export function summaryOf(history: CapacityHistory, words: string = WINDOW_WORDS[history.window]): string {
  const share = (p: Point) => (p.total === 0 ? 0 : p.schedulable / p.total);
  const lowest = history.points.reduce((low, p) => (share(p) < share(low) ? p : low));
  const latest = history.points.at(-1)!;
  const percent = (p: Point) =>
    `${p.total === 0 ? 0 : Math.round((p.schedulable * 100) / p.total)} % (${p.schedulable} of ${p.total} nodes)`;
  return (
    `${words[0]!.toUpperCase()}${words.slice(1)}: lowest schedulable ${percent(lowest)} at ` +
    `${utcDay(lowest.at)} ${utcTime(lowest.at)} UTC; latest ${percent(latest)} at ${utcTime(latest.at)} UTC.`
  );
}
