import { setTimeout as sleep } from 'node:timers/promises';
import type { Log } from '../cli-kit/log';
import { mapLimited } from '../cli-kit/map-limited';
import { REFUSED_AGAIN_AFTER_MS } from '../domain/scheduler';
import type { DrydockSide } from './drydock';
import { reconcile, WRITES_AT_ONCE, type Answering, type BridgeRules, type PassSummary } from './reconcile';
import type { Scheduler } from './scheduler';

/** The events that change what a bridge must do: a cordon, a drain and its end, a node come or gone, an end asked. */
const WAKING_EVENTS = [
  'node.cordoned',
  'node.uncordoned',
  'node.draining',
  'node.drained',
  'node.drain.',
  'node.approved',
  'node.adopted',
  'node.deleted',
  'allocation.end-requested',
];

/** The longest a bridge waits before it tries again after a failed pass or feed read. */
const MAX_BACKOFF_MS = 30_000;

export interface BridgeOptions {
  scheduler: Scheduler;
  drydock: DrydockSide;
  rules: BridgeRules;
  /** The safety net: a pass at least this often, whatever woke it or not. */
  sweepEveryMs: number;
  log: Log;
  signal: AbortSignal;
}

/**
 * Runs the bridge until `signal` aborts: a pass at start, then one whenever the scheduler's hook,
 * the event feed or the sweep timer wakes it. Passes never overlap; wake-ups during a pass make
 * one more after it. A failed pass is tried again with backoff; nothing is kept between passes.
 */
export async function runBridge(options: BridgeOptions): Promise<void> {
  const { scheduler, drydock, log, signal } = options;
  let unmatched = '';
  const answering: Answering = new Map();
  const passes = new Passes(async (wokenBy) => {
    const began = performance.now();
    const summary = await reconcile(scheduler, drydock, options.rules, answering);
    describe(summary, wokenBy, Math.round(performance.now() - began), log);
    // Said when it changes, not every pass: a scheduler node Drydock does not know is never invented.
    if (summary.unmatched.join() !== unmatched) {
      unmatched = summary.unmatched.join();
      if (unmatched) {
        log(
          'warn',
          `${scheduler.source} nodes with no Drydock node of that hostname: ${summary.unmatched.join(', ')}; ` +
            'enroll them in Drydock, or map their names under nodes in the config',
        );
      }
    }
    // A refusal (a PodDisruptionBudget at its limit) is asked again soon, whatever wakes the bridge.
    if (summary.refused > 0) passes.wakeIn('retry', REFUSED_AGAIN_AFTER_MS);
    return summary.cordoned.length + summary.uncordoned.length > 0;
  }, log);
  const stopWatching = scheduler.watchWork({
    changed: () => passes.wake('scheduler'),
    ended: (ids) => void releaseEnded(drydock, ids, answering, log, () => passes.wake('retry')),
    failed: (error) =>
      log(
        'error',
        `the scheduler's wake-ups stopped (${error.message}): passes now run on the event feed and every ${options.sweepEveryMs / 1000}s only; restart the bridge to follow its hook again`,
      ),
  });
  const sweep = setInterval(() => passes.wake('sweep'), options.sweepEveryMs);
  // The first pass starts once the feed's position is read (followFeed): one pass, not two.
  try {
    await followFeed(drydock, (why) => passes.wake(why), log, signal);
  } finally {
    clearInterval(sweep);
    stopWatching();
    await passes.stop();
  }
}

/**
 * Releases work the scheduler says ended, at once, beside whatever pass runs: a release is
 * idempotent, and a pass reads Drydock before the scheduler, so it never records again what this
 * released (reconcile). What fails here is left to a pass, woken by `retry`.
 */
async function releaseEnded(
  drydock: DrydockSide,
  ids: string[],
  answering: Answering,
  log: Log,
  retry: () => void,
) {
  let released = 0;
  try {
    // An end the pass asked is released once its answer is recorded: after, the answer is refused.
    await Promise.all(ids.map((id) => answering.get(id)));
    await mapLimited(ids, WRITES_AT_ONCE, async (id) => void (released += await drydock.releaseWork(id)));
  } catch (error) {
    log('warn', `releasing ended work failed (${(error as Error).message}); a pass tries again`);
    retry();
  }
  if (released > 0) log('info', `released ${released}`, { released, wokenBy: ['scheduler'] });
}

/** Long-polls the event feed from where it stands, waking a pass on each event that matters. */
async function followFeed(drydock: DrydockSide, wake: (why: Wake) => void, log: Log, signal: AbortSignal) {
  let cursor: string | null = null;
  let backoff = 0;
  while (!signal.aborted) {
    try {
      if (cursor === null) {
        cursor = await drydock.feedCursor();
        wake('start'); // anything before the cursor is in this pass's from-scratch read
      }
      const page = await drydock.events(cursor, WAKING_EVENTS, signal);
      cursor = page.nextCursor;
      if (page.items.length > 0) wake('feed');
      backoff = 0;
    } catch (error) {
      if (signal.aborted) return;
      backoff = Math.min(MAX_BACKOFF_MS, backoff === 0 ? 1_000 : backoff * 2);
      log(
        'warn',
        `the event feed did not answer (${(error as Error).message}); trying again in ${backoff / 1000}s`,
      );
      await sleep(backoff, undefined, { signal }).catch(() => undefined);
    }
  }
}

/** What woke a pass: the bridge starting, the scheduler (Slurm's hook, Kubernetes' watches), the event feed, the sweep, a retry, its own change. */
export type Wake = 'start' | 'scheduler' | 'feed' | 'sweep' | 'retry' | 'changed';

/** One pass at a time; a wake-up during a pass runs one more after it, however many came. */
class Passes {
  private running: Promise<void> | null = null;
  private readonly woken = new Set<Wake>();
  private stopped = false;
  private backoff = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly pass: (wokenBy: Wake[]) => Promise<boolean>,
    private readonly log: Log,
  ) {}

  /** Wakes a pass in `ms`, unless a wake-up of this kind is already due. */
  wakeIn(why: Wake, ms: number): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.wake(why);
    }, ms);
  }

  wake(why: Wake): void {
    if (this.stopped) return;
    this.woken.add(why);
    if (this.running) return;
    this.running = this.loop().finally(() => (this.running = null));
  }

  private async loop(): Promise<void> {
    do {
      const wokenBy = [...this.woken];
      this.woken.clear();
      try {
        if (await this.pass(wokenBy)) this.woken.add('changed');
        this.backoff = 0;
      } catch (error) {
        this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff === 0 ? 1_000 : this.backoff * 2);
        this.log(
          'warn',
          `pass failed (${(error as Error).message}); trying again in ${this.backoff / 1000}s`,
        );
        if (this.retry) clearTimeout(this.retry);
        this.retry = null;
        this.wakeIn('retry', this.backoff);
        return;
      }
    } while (this.woken.size > 0 && !this.stopped);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    await this.running;
  }
}

function describe(summary: PassSummary, wokenBy: Wake[], tookMs: number, log: Log): void {
  const did = [
    summary.observed && `recorded ${summary.observed}`,
    summary.released && `released ${summary.released}`,
    summary.ended && `asked to end ${summary.ended}${summary.refused ? ` (${summary.refused} refused)` : ''}`,
    summary.cordoned.length && `drained ${summary.cordoned.join(', ')}`,
    summary.uncordoned.length && `resumed ${summary.uncordoned.join(', ')}`,
    summary.reported && `reported ${summary.reported} node${summary.reported === 1 ? '' : 's'}`,
  ].filter(Boolean);
  // The unmatched nodes by count: their names are said when they change (runBridge), not each pass.
  const fields = { ...summary, unmatched: summary.unmatched.length, wokenBy, tookMs };
  if (did.length > 0) log('info', did.join('; '), fields);
  for (const problem of summary.problems) log('warn', problem);
}
