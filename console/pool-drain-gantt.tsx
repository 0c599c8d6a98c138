import type { Schemas } from '@drydock/client';
import { POOL_DRAIN_SPAN_STATES, type PoolDrainSpanState } from '../domain/pool-drain-timeline';
import type { PoolDrainProgress } from '../domain/progress';
import { CONSOLE_PATH } from './context';
import { Legend, SPAN_COLOURS, utcClock } from './svg';
import {
  AXIS_H,
  ChartTable,
  HostLabel,
  LABEL_W,
  NowLine,
  PLOT_W,
  ROW_H,
  TimeAxis,
  TOP,
  WIDTH,
} from './timeline';

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
      <ChartTable summary="The timeline as a table" columns={['Node', 'Now', 'Spans (UTC)']}>
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
      </ChartTable>
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

/** `10:02:05 → 10:05:30` (or `since 10:02:05`), in UTC. */
function spanTimes(span: Span): string {
  return span.to === null ? `since ${utcClock(span.from)}` : `${utcClock(span.from)} → ${utcClock(span.to)}`;
}
