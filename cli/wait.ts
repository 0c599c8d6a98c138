import type { ApiClient } from './client';
import { isFinished } from '../domain/operation-status';
import { CliError } from './errors';
import type { Output } from './output';
import { progressInWords } from '../domain/progress';
import { errorText, type Operation } from './views/operations';

/**
 * The longest `--wait` goes without reading the operation again: it wakes at once on an event of
 * the operation's node, but some progress moves without one (a drain's count of live allocations,
 * the elapsed time on a terminal).
 */
const REREAD_MS = 3_000;

/**
 * Follows the operation until it ends: reads it again on each event of its node (the event feed's
 * long-poll, `GET /v1/events?nodeId=&wait=`; every event the key sees for an operation of a pool)
 * and at least every `REREAD_MS`, showing its progress on a terminal. Resolves to the finished
 * operation; throws `TIMEOUT` when `timeoutMs` passes first (the operation itself goes on).
 * `settled` says when a running operation is not worth waiting for any longer (a refused purge
 * stays running until the node is deleted): the wait then resolves to it, still running.
 * `logChanges`: where stderr is no terminal (a log, a pipe), a line each time the progress changes.
 */
export async function waitForOperation(
  api: ApiClient,
  out: Output,
  operation: Operation,
  timeoutMs?: number,
  settled: (op: Operation) => boolean = () => false,
  logChanges = false,
): Promise<Operation> {
  const started = Date.now();
  const deadline = timeoutMs === undefined ? Infinity : started + timeoutMs;
  const onInterrupt = () => {
    out.note(
      `stopped waiting; ${operation.kind} ${operation.id} goes on: drydock operations show ${operation.id} --wait`,
    );
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  const wakeups = new NodeEvents(api, operation.nodeId ?? undefined);
  try {
    if (!isFinished(operation.status)) await wakeups.start();
    let op = operation;
    let logged: string | undefined;
    while (!isFinished(op.status) && !settled(op)) {
      const elapsed = formatElapsed(Date.now() - started);
      const progress = progressInWords(op.progress);
      out.progress(`${op.kind} ${op.id} ${op.status} ${elapsed}: ${progress}`);
      if (logChanges && !out.io.stderrIsTTY && progress !== logged) {
        out.note(`${op.kind} ${op.id} ${elapsed}: ${progress}`);
        logged = progress;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new CliError(
          'TIMEOUT',
          `${op.kind} ${op.id} still ${op.status} after ${formatElapsed(timeoutMs ?? 0)}; it goes on — ` +
            `follow it with: drydock operations show ${op.id} --wait`,
        );
      }
      await wakeups.next(Math.min(REREAD_MS, left));
      op = await api.GET('/v1/operations/{id}', { params: { path: { id: op.id } } });
    }
    return op;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    out.clearProgress();
  }
}

/** Prints a finished operation; throws unless it succeeded, so the exit code says how it ended. */
export function reportFinished(out: Output, op: Operation): number {
  out.result(op, () => `${op.kind} ${op.id} ${op.status}${op.completedAt ? ` at ${op.completedAt}` : ''}`);
  const failure = finishedOperationError(op);
  if (failure) throw failure;
  return 0;
}

function finishedOperationError(op: Operation): CliError | null {
  switch (op.status) {
    case 'succeeded':
      return null;
    case 'failed':
      return new CliError(
        'OPERATION_FAILED',
        `${op.kind} ${op.id} failed${op.error ? `: ${errorText(op.error)}` : ''}`,
        1,
      );
    case 'cancelled':
      return new CliError('OPERATION_CANCELLED', `${op.kind} ${op.id} was cancelled`, 1);
    default:
      return new CliError('INTERNAL', `${op.kind} ${op.id} is still ${op.status}`, 1);
  }
}

/**
 * Wake-ups on the event feed: `next` resolves at the first event (of `nodeId`, or any the key
 * sees) after the previous call, or after `ms`. (Reading the feed takes `compute:nodes:read`, as
 * reading the operation does.)
 */
class NodeEvents {
  private after: string | undefined;

  constructor(
    private readonly api: ApiClient,
    private readonly nodeId: string | undefined,
  ) {}

  /** Takes the feed's cursor of now: events from here on wake `next`. */
  async start(): Promise<void> {
    await this.feed({ after: '0', limit: 0, wait: 0 });
  }

  async next(ms: number): Promise<void> {
    // The feed waits whole seconds: under one, a plain sleep.
    const wait = Math.floor(ms / 1000);
    if (this.after === undefined || wait === 0) return sleep(ms);
    await this.feed({ after: this.after, limit: 200, wait });
  }

  private async feed(query: { after: string; limit: number; wait: number }) {
    const page = await this.api.GET('/v1/events', { params: { query: { ...query, nodeId: this.nodeId } } });
    this.after = page.nextCursor;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `45s`, `3m05s`, `2h10m`. */
export function formatElapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
