import type { Schemas } from '@drydock/client';
import type { Child } from 'hono/jsx';
import { POOL_DRAIN_SPAN_STATES, type PoolDrainSpanState } from '../domain/pool-drain-timeline';
import type { PoolDrainProgress } from '../domain/progress';
import { CONSOLE_PATH } from './context';
import { Legend, SPAN_COLOURS, utcClock } from './svg';

type Row = NonNullable<PoolDrainProgress['waitingFor']>['timeline'][number];
type Span = Row['spans'][number];

/** Each state in words, in the legend, the bars' titles and the table. */
const SPAN_WORDS: Record<PoolDrainSpanState, string> = {
  waiting: 'waiting for its turn',
  draining: 'draining',
  'waiting-for-budget': 'waiting for the budget',
  'forced-release': 'forced release',
  drained: 'drained',
  failed: 'failed',
};

// The drawing's own units (it scales to its box): the hostnames, then the time. The console's other
// timelines (a rolling maintenance's, a drain's) draw in the same units.
export const WIDTH = 760;
export const LABEL_W = 150;
export const RIGHT = 12;
export const TOP = 34;
export const ROW_H = 20;
export const AXIS_H = 34;
export const PLOT_W = WIDTH - LABEL_W - RIGHT;

/** The tick spacings the time axis chooses from, in seconds: at most 8 ticks across the drawing. */
const TICKS = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];

/**
 * A pool drain's nodes over time (its progress's `timeline`): one row a node, by hostname linked
 * to its page, a bar per span coloured by its state and titled in words, the time axis in UTC,
 * and, while it runs, a line at now. The same spans as a table under it.
 */
export function PoolDrainGantt(props: { operation: Schemas['Operation']; now: number }) {
  const op = props.operation;
  const progress = op.progress as PoolDrainProgress;
  // A record written before the timeline was kept has none.
  const rows = progress.waitingFor?.timeline ?? [];
  if (rows.length === 0 || !progress.startedAt) return null;
  const start = Math.min(...rows.map((row) => Date.parse(row.spans[0]!.from)));
  const running = op.completedAt === null;
  const end = Math.max(start + 1000, running ? props.now : Date.parse(op.completedAt!));
  const x = (iso: string | null) => {
    const at = iso === null ? end : Math.min(end, Date.parse(iso));
    return LABEL_W + ((at - start) / (end - start)) * PLOT_W;
  };
  const height = TOP + rows.length * ROW_H + AXIS_H;
  const words = `${rows.length} node${rows.length === 1 ? '' : 's'} from ${utcClock(new Date(start).toISOString())} to ${running ? 'now' : utcClock(op.completedAt!)} UTC`;
  return (
    <figure class="chart pool-drain-gantt" data-operation={op.id}>
      <svg
        viewBox={`0 0 ${WIDTH} ${height}`}
        width="100%"
        // A group, not an image: its hostnames are links (an image's content is not reachable).
        role="group"
        aria-labelledby={`gantt-${op.id}-title gantt-${op.id}-desc`}
        font-size="11"
      >
        <title id={`gantt-${op.id}-title`}>{`Pool drain ${op.id}, node by node`}</title>
        <desc id={`gantt-${op.id}-desc`}>{`${words}; the table below has each node's spans.`}</desc>
        <Legend
          left={8}
          items={POOL_DRAIN_SPAN_STATES.map((state) => ({
            colour: SPAN_COLOURS[state],
            words: SPAN_WORDS[state],
          }))}
        />
        <TimeAxis start={start} end={end} top={TOP} bottom={TOP + rows.length * ROW_H} x={x} />
        {rows.map((row, i) => (
          <GanttRow row={row} y={TOP + i * ROW_H} x={x} />
        ))}
        {running && <NowLine x={x(null)} bottom={TOP + rows.length * ROW_H} />}
      </svg>
      <figcaption>{`Each node of the pool drain over time: ${words}.`}</figcaption>
      <details>
        <summary>The timeline as a table</summary>
        <table class="gantt-table">
          <thead>
            <tr>
              <th>Node</th>
              <th>Now</th>
              <th>Spans (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr>
                <td>
                  <a href={`${CONSOLE_PATH}/nodes/${row.nodeId}`} title={row.nodeId}>
                    {row.hostname}
                  </a>
                </td>
                <td>{SPAN_WORDS[row.spans.at(-1)!.state]}</td>
                <td>{row.spans.map((span) => `${SPAN_WORDS[span.state]} ${spanTimes(span)}`).join('; ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** One node: its hostname (linked, its id in the title) and a bar per span. */
function GanttRow(props: { row: Row; y: number; x: (iso: string | null) => number }) {
  const { row, y, x } = props;
  return (
    <g class="gantt-row" data-node={row.nodeId}>
      <HostLabel nodeId={row.nodeId} hostname={row.hostname} y={y} />
      {row.spans.map((span) => {
        const left = x(span.from);
        return (
          <rect
            data-state={span.state}
            x={left.toFixed(1)}
            width={Math.max(2, x(span.to) - left).toFixed(1)}
            y={y + 3}
            height={ROW_H - 6}
            fill={SPAN_COLOURS[span.state]}
          >
            <title>{`${row.hostname}: ${SPAN_WORDS[span.state]} ${spanTimes(span)}`}</title>
          </rect>
        );
      })}
    </g>
  );
}

/** A drawing's numbers as a table, folded under it: `summary` opens it; `children` are its rows. */
export function ChartTable(props: { summary: string; columns: string[]; children: Child }) {
  return (
    <details>
      <summary>{props.summary}</summary>
      <div class="table-box">
        <table class="gantt-table">
          <thead>
            <tr>
              {props.columns.map((column) => (
                <th>{column}</th>
              ))}
            </tr>
          </thead>
          <tbody>{props.children}</tbody>
        </table>
      </div>
    </details>
  );
}

/** A row's node: its hostname at the row's left, linked to its page, its id in the link's title. */
export function HostLabel(props: { nodeId: string; hostname: string; y: number }) {
  return (
    <a href={`${CONSOLE_PATH}/nodes/${props.nodeId}`}>
      <title>{props.nodeId}</title>
      <text x={LABEL_W - 6} y={props.y + ROW_H / 2 + 4} text-anchor="end" fill="currentColor">
        {props.hostname}
      </text>
    </a>
  );
}

/** The dashed line at now, across the rows from the top to `bottom`, while the operation runs. */
export function NowLine(props: { x: number; bottom: number }) {
  return (
    <g class="gantt-now">
      <line
        x1={props.x}
        x2={props.x}
        y1={TOP - 4}
        y2={props.bottom}
        stroke="currentColor"
        stroke-dasharray="3 2"
      />
      <text x={props.x - 3} y={TOP - 6} text-anchor="end" fill="currentColor">
        now
      </text>
    </g>
  );
}

/** Ticks at a round spacing (at most 8), labelled in UTC, with faint lines across the rows. */
export function TimeAxis(props: {
  start: number;
  end: number;
  top: number;
  bottom: number;
  x: (iso: string | null) => number;
}) {
  const seconds = (props.end - props.start) / 1000;
  const every = (TICKS.find((s) => seconds / s <= 8) ?? 86400) * 1000;
  const ticks: string[] = [];
  for (let at = Math.ceil(props.start / every) * every; at <= props.end; at += every) {
    ticks.push(new Date(at).toISOString());
  }
  const label = (iso: string) => (every < 60_000 ? iso.slice(11, 19) : iso.slice(11, 16));
  return (
    <g class="chart-axis">
      <line x1={LABEL_W} x2={WIDTH - RIGHT} y1={props.bottom} y2={props.bottom} stroke="currentColor" />
      {ticks.map((iso) => (
        <g>
          <line
            x1={props.x(iso)}
            x2={props.x(iso)}
            y1={props.top}
            y2={props.bottom + 4}
            stroke="#9ca3af"
            stroke-width="0.5"
          />
          <text x={props.x(iso)} y={props.bottom + 16} text-anchor="middle" fill="currentColor">
            {label(iso)}
          </text>
        </g>
      ))}
      <text x={WIDTH - RIGHT} y={props.bottom + AXIS_H - 4} text-anchor="end" fill="currentColor">
        time (UTC)
      </text>
    </g>
  );
}

/** `10:02:05 → 10:05:30` (or `since 10:02:05`), in UTC. */
function spanTimes(span: Span): string {
  return span.to === null ? `since ${utcClock(span.from)}` : `${utcClock(span.from)} → ${utcClock(span.to)}`;
}
