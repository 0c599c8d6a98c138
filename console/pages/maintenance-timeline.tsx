import type { Schemas } from '@drydock/client';
import type { Child } from 'hono/jsx';
import { CONSOLE_PATH } from '../context';

type Operation = Schemas['Operation'];
type MaintenanceProgress = Extract<Schemas['OperationProgress'], { kind: 'maintenance' }>;
type StepRecord = NonNullable<MaintenanceProgress['waitingFor']>['steps'][number];

/** Where a step stands: how it ended, or that it runs now, or that it has not begun. */
export type StepState = 'done' | 'failed' | 'cancelled' | 'running' | 'not started';

/** One bar of a timeline: a step as the plan writes it, where it stands, what it ran. */
export interface TimelineStep {
  step: string;
  state: StepState;
  startedAt: string | null;
  endedAt: string | null;
  /** The page of what it ran: its command, or its drain operation. */
  href?: string;
  /** Why it failed. */
  reason?: string;
}

/** One row of a timeline: one node's maintenance (a rolling maintenance has one row a node). */
export interface TimelineRow {
  /** What the row is: a node's hostname, linked; a single maintenance needs none. */
  label?: Child;
  steps: TimelineStep[];
}

/** The steps of one node's maintenance, as its operation's progress records them. */
export function stepsOfMaintenance(operation: Operation): TimelineStep[] {
  const progress = operation.progress as MaintenanceProgress;
  const waitingFor = progress.kind === 'maintenance' ? progress.waitingFor : null;
  if (!waitingFor) return [];
  const open = operation.status === 'pending' || operation.status === 'running';
  return waitingFor.steps.map((record, i) => ({
    step: record.step,
    state: record.outcome ?? (open && i === waitingFor.step ? 'running' : 'not started'),
    startedAt: record.startedAt,
    endedAt: record.endedAt,
    href: hrefOf(record),
    reason: record.reason,
  }));
}

function hrefOf(record: StepRecord): string | undefined {
  if (record.commandId) return `${CONSOLE_PATH}/commands/${record.commandId}`;
  if (record.operationId) return `${CONSOLE_PATH}/operations/${record.operationId}`;
  return undefined;
}

/**
 * A maintenance's steps as a timeline: per row, one bar per step in the plan's order, coloured by
 * where it stands and always saying it in words (the colour only repeats the text), each linked to
 * the command or drain it ran.
 */
export function MaintenanceTimeline(props: { rows: TimelineRow[] }) {
  return (
    <div class="timeline">
      {props.rows.map((row) => (
        <div class="timeline-row">
          {row.label !== undefined && <div class="timeline-label">{row.label}</div>}
          <ol class="timeline-steps">
            {row.steps.map((step, i) => (
              <li class={`timeline-step ${step.state.replace(' ', '-')}`} data-step={step.step}>
                <span class="timeline-bar" aria-hidden="true" />
                <span class="timeline-name">
                  {i + 1}.{' '}
                  {step.href ? (
                    <a href={step.href}>
                      <code>{step.step}</code>
                    </a>
                  ) : (
                    <code>{step.step}</code>
                  )}
                </span>
                <span class="timeline-state">{step.state}</span>
                <span class="timeline-time">{timesOf(step)}</span>
                {step.reason && <span class="timeline-reason">{step.reason}</span>}
              </li>
            ))}
          </ol>
        </div>
      ))}
    </div>
  );
}

/** When a step began and ended, in UTC to the second; how long it took once it ended. */
function timesOf(step: TimelineStep): string {
  if (!step.startedAt) return '';
  const began = clock(step.startedAt);
  if (!step.endedAt) return `since ${began}`;
  const seconds = Math.max(0, Math.round((Date.parse(step.endedAt) - Date.parse(step.startedAt)) / 1000));
  return `${began} → ${clock(step.endedAt)} (${seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`})`;
}

const clock = (iso: string) => `${iso.slice(11, 19)}Z`;
