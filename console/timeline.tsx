import type { Child } from 'hono/jsx';
import { CONSOLE_PATH } from './context';

/*
 * What the console's timelines share (a pool drain's Gantt, a rolling maintenance's, a drain's
 * allocations): their units, the time axis, the line at now, a row's host label and the table of
 * a drawing's numbers.
 */

// A timeline's own units (it scales to its box): the row labels, then the time.
export const WIDTH = 760;
export const LABEL_W = 150;
export const RIGHT = 12;
export const TOP = 34;
export const ROW_H = 20;
export const AXIS_H = 34;
export const PLOT_W = WIDTH - LABEL_W - RIGHT;

/** The tick spacings the time axis chooses from, in seconds: at most 8 ticks across the drawing. */
const TICKS = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];

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
