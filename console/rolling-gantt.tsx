import { CONSOLE_PATH } from './context';
import { stepsOfMaintenance, type TimelineStep } from './pages/maintenance-timeline';
import {
  AXIS_H,
  HostLabel,
  LABEL_W,
  NowLine,
  PLOT_W,
  ROW_H,
  TOP,
  TimeAxis,
  WIDTH,
  ChartTable,
} from './timeline';
import { rollingOf, type Rolling } from './rolling';
import { Legend, utcClock } from './svg';

/** What a step's bar is coloured by: its kind while it runs or once done; its end when it failed or stopped. */
type Phase = 'drain' | 'run' | 'reboot' | 'verify' | 'uncordon' | 'failed' | 'cancelled';
const PHASES: readonly Phase[] = ['drain', 'run', 'reboot', 'verify', 'uncordon', 'failed', 'cancelled'];
const PHASE_COLOURS: Record<Phase, string> = {
  drain: '#2563eb',
  run: '#0f766e',
  reboot: '#b45309',
  verify: '#7c3aed',
  // Olive, not the run step's teal: the two often stand side by side.
  uncordon: '#65a30d',
  failed: '#b91c1c',
  cancelled: '#6b7280',
};

/** A step's bar: the step's kind, or how it ended when it failed or was cancelled. */
function phaseOf(step: TimelineStep): Phase {
  if (step.state === 'failed' || step.state === 'cancelled') return step.state;
  const kind = step.step.split(':')[0]!;
  return (PHASES as readonly string[]).includes(kind) ? (kind as Phase) : 'run';
}

interface Row {
  nodeId: string;
  hostname: string;
  status: string;
  /** The steps that began, each with its span (a running one to now). */
  bars: { step: TimelineStep; from: number; to: number | null }[];
  /** The steps not begun yet. */
  waiting: string[];
}

/**
 * A rolling maintenance node by node, over time: one row per node it reached (its hostname linked
 * to its page), a bar per step that began — coloured by the step (drain, run, reboot, verify,
 * uncordon), red when it failed, grey when cancelled, titled in words — the time axis in UTC and,
 * while it runs, a line at now. The same as a table under it. From its node maintenances' records
 * (`rolling.children`); a node whose maintenance was not read has an empty row.
 */
export function RollingGantt(props: { rolling: Rolling; now: number }) {
  const { operation: op, children } = props.rolling;
  const w = rollingOf(op);
  if (!w || w.nodes.length === 0) return null;
  const running = op.completedAt === null;
  const rows: Row[] = w.nodes.map((node) => {
    const child = node.operationId ? children.get(node.operationId) : undefined;
    const steps = child ? stepsOfMaintenance(child) : [];
    const childOver = child?.completedAt ? Date.parse(child.completedAt) : null;
    return {
      nodeId: node.nodeId,
      hostname: node.hostname ?? node.nodeId,
      status: node.status,
      bars: steps.flatMap((step) =>
        step.startedAt
          ? [
              {
                step,
                from: Date.parse(step.startedAt),
                to: step.endedAt ? Date.parse(step.endedAt) : childOver,
              },
            ]
          : [],
      ),
      waiting: steps.filter((s) => !s.startedAt).map((s) => s.step),
    };
  });
  const began = rows.flatMap((r) => r.bars.map((b) => b.from));
  const start = Math.min(Date.parse(op.progress.startedAt ?? op.createdAt), ...began);
  const end = Math.max(start + 1000, running ? props.now : Date.parse(op.completedAt!));
  const x = (at: number | null) => LABEL_W + ((Math.min(at ?? end, end) - start) / (end - start)) * PLOT_W;
  const xIso = (iso: string | null) => x(iso === null ? null : Date.parse(iso));
  const bottom = TOP + rows.length * ROW_H;
  const id = `rolling-${op.id}`;
  const words = `${rows.length} node${rows.length === 1 ? '' : 's'} from ${utcClock(iso(start))} to ${
    running ? 'now' : utcClock(op.completedAt!)
  } UTC`;
  return (
    <figure class="chart rolling-gantt" data-operation={op.id}>
      <svg
        viewBox={`0 0 ${WIDTH} ${bottom + AXIS_H}`}
        width="100%"
        // A group, not an image: its hostnames are links.
        role="group"
        aria-labelledby={`${id}-title ${id}-desc`}
        font-size="11"
      >
        <title id={`${id}-title`}>{`Rolling maintenance ${op.id}, node by node`}</title>
        <desc id={`${id}-desc`}>{`${words}; the table below has each node's steps.`}</desc>
        <Legend left={8} items={PHASES.map((p) => ({ colour: PHASE_COLOURS[p], words: p }))} />
        <TimeAxis start={start} end={end} top={TOP} bottom={bottom} x={xIso} />
        {rows.map((row, i) => {
          const y = TOP + i * ROW_H;
          return (
            <g class="gantt-row" data-node={row.nodeId}>
              <HostLabel nodeId={row.nodeId} hostname={row.hostname} y={y} />
              {row.bars.map((bar) => {
                const left = x(bar.from);
                const phase = phaseOf(bar.step);
                return (
                  <rect
                    data-step={bar.step.step}
                    data-state={bar.step.state}
                    x={left.toFixed(1)}
                    width={Math.max(2, x(bar.to) - left).toFixed(1)}
                    y={y + 3}
                    height={ROW_H - 6}
                    fill={PHASE_COLOURS[phase]}
                  >
                    <title>{`${row.hostname}: ${bar.step.step} ${bar.step.state} ${spanWords(bar.step)}`}</title>
                  </rect>
                );
              })}
            </g>
          );
        })}
        {running && <NowLine x={x(null)} bottom={bottom} />}
      </svg>
      <figcaption>{`Each node of the rolling maintenance over time: ${words}.`}</figcaption>
      <ChartTable summary="The nodes' steps as a table" columns={['Node', 'Status', 'Steps (UTC)']}>
        {rows.map((row) => (
          <tr data-node={row.nodeId}>
            <td>
              <a href={`${CONSOLE_PATH}/nodes/${row.nodeId}`} title={row.nodeId}>
                {row.hostname}
              </a>
            </td>
            <td>{row.status}</td>
            <td>
              {[
                ...row.bars.map((b) => `${b.step.step} ${b.step.state} ${spanWords(b.step)}`),
                ...row.waiting.map((step) => `${step} not started`),
              ].join('; ') || 'not known'}
            </td>
          </tr>
        ))}
      </ChartTable>
    </figure>
  );
}

const iso = (at: number) => new Date(at).toISOString();

/** `10:02:05 → 10:05:30`, or `since 10:02:05`, in UTC. */
function spanWords(step: TimelineStep): string {
  if (!step.startedAt) return '';
  return step.endedAt
    ? `${utcClock(step.startedAt)} → ${utcClock(step.endedAt)}`
    : `since ${utcClock(step.startedAt)}`;
}
