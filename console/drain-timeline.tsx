import type { Schemas } from '@drydock/client';
import { AXIS_H, LABEL_W, NowLine, PLOT_W, ROW_H, TOP, TimeAxis, WIDTH, ChartTable } from './timeline';
import { Legend, utcClock } from './svg';

type Operation = Schemas['Operation'];
type Allocation = Schemas['Allocation'];
type DrainProgress = Extract<Schemas['OperationProgress'], { kind: 'drain' }>;

/** A node's allocations as read for its drain's picture; `more` when the node had more than were read. */
export interface NodeAllocations {
  items: Allocation[];
  more: boolean;
}

/** Who a drain's release by force names (activities/drain.ts). */
const FORCED_BY = 'system:drain';
/** The most rows the drawing has (the table has them all). */
const ROWS_DRAWN = 40;

/** How an allocation's bar stands: ended by itself, released by the drain's force, held, expected. */
type BarState = 'ended' | 'forced' | 'held' | 'expected';
const BAR_WORDS: Record<BarState, string> = {
  ended: 'ended',
  forced: 'released by force',
  held: 'held',
  expected: 'expected to end',
};
const BAR_COLOURS: Record<BarState, string> = {
  ended: '#15803d',
  forced: '#7c3aed',
  held: '#2563eb',
  expected: '#93c5fd',
};
const DEADLINE_COLOUR = '#dc2626';

/** One allocation over the drain: when it held the node from and to, and how it ended. */
interface Row {
  allocation: Allocation;
  label: string;
  from: number;
  /** When it ended; null while it holds the node. */
  ended: number | null;
  forced: boolean;
  /** While it holds the node: when it is expected to end (its end, or the deadline's force); null: no end. */
  expected: number | null;
}

/** When an allocation stopped holding its node (released, or past its end); null while it holds it. */
function endOf(a: Allocation, now: number): number | null {
  const released = a.releasedAt ? Date.parse(a.releasedAt) : null;
  const ends = a.endsAt ? Date.parse(a.endsAt) : null;
  if (released !== null) return ends !== null && ends < released ? ends : released;
  return ends !== null && ends <= now ? ends : null;
}

/**
 * The allocations a drain waits for, over time: one row each that held the node while it drained,
 * from the drain's start (or its placement) to its end — ended by itself, released by force at the
 * deadline, or held still and expected to end (at its end, or at the deadline, when what is left is
 * released by force) — with the deadline as a line across them and, while it runs, a line at now.
 * From the node's allocations (`GET /v1/allocations?nodeId=`) and the drain's record.
 */
export function DrainTimeline(props: { operation: Operation; allocations: NodeAllocations; now: number }) {
  const { operation: op, now } = props;
  const progress = op.progress as DrainProgress;
  const start = Date.parse(progress.startedAt ?? op.createdAt);
  const running = op.completedAt === null;
  const over = running ? now : Date.parse(op.completedAt!);
  const deadline = progress.deadline ? Date.parse(progress.deadline) : null;
  const rows: Row[] = props.allocations.items
    .filter((a) => {
      const ended = endOf(a, now);
      return Date.parse(a.createdAt) <= over && (ended === null || ended > start);
    })
    .map((a) => {
      const ended = endOf(a, now);
      const ends = a.endsAt ? Date.parse(a.endsAt) : null;
      // Held past the deadline, it is released by force then (once the budget has a slot).
      const expected =
        ended !== null || !running
          ? null
          : deadline !== null && (ends === null || ends > deadline)
            ? deadline
            : ends;
      return {
        allocation: a,
        label: a.externalId ? `${a.source ?? ''} ${a.externalId}`.trim() : `${a.kind} …${a.id.slice(-6)}`,
        from: Math.max(start, Date.parse(a.createdAt)),
        ended,
        forced: ended !== null && a.releasedBy === FORCED_BY,
        expected,
      };
    })
    .sort((a, b) => (a.ended ?? a.expected ?? Infinity) - (b.ended ?? b.expected ?? Infinity));
  if (rows.length === 0) {
    return (
      <p class="muted" data-drain-timeline="">
        {`No allocation held the node while this drain ${running ? 'runs' : 'ran'}${props.allocations.more ? ' (among the allocations read)' : ''}.`}
      </p>
    );
  }
  const drawn = rows.slice(0, ROWS_DRAWN);
  const last = Math.max(over, deadline ?? 0, ...rows.map((r) => r.ended ?? r.expected ?? 0));
  // A margin on the right, so a bar ending at the edge still shows where it ends.
  const end = Math.max(start + 1000, last + (last - start) * 0.04);
  const x = (at: number) => LABEL_W + ((Math.min(at, end) - start) / (end - start)) * PLOT_W;
  const xIso = (iso: string | null) => x(iso === null ? end : Date.parse(iso));
  const bottom = TOP + drawn.length * ROW_H;
  const height = bottom + AXIS_H;
  const id = `drain-${op.id}`;
  const words = `${rows.length} allocation${rows.length === 1 ? '' : 's'} from ${utcClock(iso(start))} to ${
    running ? 'now' : utcClock(op.completedAt!)
  } UTC, ${deadline !== null ? `the deadline at ${utcClock(iso(deadline))}` : 'no deadline (the drain only waits)'}`;
  return (
    <figure class="chart drain-timeline" data-drain-timeline={op.id}>
      <svg
        viewBox={`0 0 ${WIDTH} ${height}`}
        width="100%"
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        font-size="11"
      >
        <title id={`${id}-title`}>{`Drain ${op.id}: its allocations against its deadline`}</title>
        <desc id={`${id}-desc`}>{`${words}; the table below has each allocation.`}</desc>
        <Legend
          left={8}
          items={(Object.keys(BAR_WORDS) as BarState[])
            .map((state) => ({ colour: BAR_COLOURS[state], words: BAR_WORDS[state] }))
            .concat(deadline !== null ? [{ colour: DEADLINE_COLOUR, words: 'deadline' }] : [])}
        />
        <TimeAxis start={start} end={end} top={TOP} bottom={bottom} x={xIso} />
        {drawn.map((row, i) => (
          <AllocationRow row={row} y={TOP + i * ROW_H} x={x} end={end} over={over} />
        ))}
        {deadline !== null && deadline <= end && (
          <g class="drain-deadline">
            <line
              x1={x(deadline)}
              x2={x(deadline)}
              y1={TOP - 4}
              y2={bottom}
              stroke={DEADLINE_COLOUR}
              stroke-width="2"
            />
            {/* Its words on the line's right, or on its left near the drawing's right edge. */}
            <text
              x={x(deadline) + (x(deadline) > WIDTH - 100 ? -3 : 3)}
              y={TOP - 6}
              text-anchor={x(deadline) > WIDTH - 100 ? 'end' : 'start'}
              fill="currentColor"
            >
              {`deadline ${utcClock(iso(deadline)).slice(0, 5)}`}
            </text>
          </g>
        )}
        {running && <NowLine x={x(now)} bottom={bottom} />}
      </svg>
      <figcaption>
        {`The drain's allocations over time: ${words}.`}
        {rows.length > drawn.length &&
          ` The first ${drawn.length} are drawn; the table has all ${rows.length}.`}
        {props.allocations.more &&
          ' The node has more allocations than were read: the oldest were read first.'}
      </figcaption>
      <ChartTable
        summary="The allocations as a table"
        columns={['Allocation', 'Tenant', 'Held the node (UTC)', 'How it ends']}
      >
        {rows.map((row) => (
          <tr data-allocation={row.allocation.id}>
            <td>
              <code>{row.allocation.id}</code>
              {row.allocation.externalId && ` (${row.label})`}
            </td>
            <td>{row.allocation.tenantId}</td>
            <td>{heldInWords(row)}</td>
            <td>{howInWords(row, deadline)}</td>
          </tr>
        ))}
      </ChartTable>
    </figure>
  );
}

/** One allocation: its label, what it held (ended or forced, or held until now) and what is expected. */
function AllocationRow(props: { row: Row; y: number; x: (at: number) => number; end: number; over: number }) {
  const { row, y, x } = props;
  const heldTo = row.ended ?? props.over;
  const state: BarState = row.ended === null ? 'held' : row.forced ? 'forced' : 'ended';
  const left = x(row.from);
  const bar = (from: number, to: number, s: BarState, title: string) => (
    <rect
      data-state={s}
      x={x(from).toFixed(1)}
      width={Math.max(2, x(to) - x(from)).toFixed(1)}
      y={y + 3}
      height={ROW_H - 6}
      fill={BAR_COLOURS[s]}
    >
      <title>{title}</title>
    </rect>
  );
  return (
    <g class="gantt-row" data-allocation={row.allocation.id}>
      <text x={LABEL_W - 6} y={y + ROW_H / 2 + 4} text-anchor="end" fill="currentColor">
        <title>{row.allocation.id}</title>
        {row.label.length > 22 ? `${row.label.slice(0, 21)}…` : row.label}
      </text>
      {bar(row.from, Math.max(heldTo, row.from), state, `${row.label}: ${heldInWords(row)}`)}
      {row.ended === null &&
        (row.expected !== null
          ? bar(
              heldTo,
              row.expected,
              'expected',
              `${row.label}: expected to end ${utcClock(iso(row.expected))}`,
            )
          : left < x(props.end) && (
              <text x={x(heldTo) + 4} y={y + ROW_H / 2 + 4} fill="currentColor">
                no end
              </text>
            ))}
    </g>
  );
}

const iso = (at: number) => new Date(at).toISOString();

/** `held 10:00:00 → 10:04:00 (ended)` in words. */
function heldInWords(row: Row): string {
  const since = utcClock(iso(row.from));
  if (row.ended === null) return `held since ${since}`;
  return `${since} → ${utcClock(iso(row.ended))}, ${row.forced ? 'released by force' : 'ended'}`;
}

/** How it ended, or how it is expected to. */
function howInWords(row: Row, deadline: number | null): string {
  if (row.ended !== null) return row.forced ? 'released by force past the deadline' : 'ended by itself';
  if (row.expected === null) return 'no end: it holds the node until it is released';
  if (deadline !== null && row.expected === deadline)
    return `released by force at the deadline ${utcClock(iso(deadline))}`;
  return `expected to end ${utcClock(iso(row.expected))}`;
}
