import {
  allHandlersFinished,
  condition,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type QueryDefinition,
} from '@temporalio/workflow';
import type { StepFailure } from '../activities/failure';
import { DRAIN_MIN_SLEEP_MS, progressInWords, type OperationProgress } from '../domain/progress';
import { cleanUpOnCancel } from './cancellation';
import { wakeSignal } from './definitions';
import { waitingForWorker } from './progress';
import { unlessGivenUp } from './refusal';

type PoolProgress = Extract<OperationProgress, { kind: 'pool-drain' | 'pool-maintenance' }>;

/** History events after which a run continues as new; well below Temporal's warning at 10,240. */
const DEFAULT_CONTINUE_AS_NEW_AFTER = 8_000;

/** What a workflow of a pool does with its children: look at them, start more, give up. */
export interface ChildrenSteps<P extends PoolProgress> {
  /** One look (one transaction): where the children stand, and how many more may start now. */
  look: () => Promise<{ progress: P; startable: number }>;
  /** Requests up to `count` more children (each through the outbox, as any operation). */
  request: (count: number) => Promise<unknown>;
  fail: (failure: StepFailure) => Promise<unknown>;
}

/**
 * The loop of a workflow that runs one operation per node of a pool (a pool drain, a rolling
 * maintenance): look, start what may start, and otherwise wait until woken — a child that ends
 * wakes it through the outbox, and so does a resume — or until the record's `nextCheckAt`, minutes
 * away: no poll. Ends with the operation's final phase once it is none of `working`.
 */
export function runChildren<P extends PoolProgress>(
  kind: P['kind'],
  query: QueryDefinition<P>,
  steps: ChildrenSteps<P>,
  options: { working: readonly string[]; continueAsNewAfter?: number; continueAsNew: () => Promise<never> },
): Promise<string> {
  let progress = waitingForWorker(kind) as P;
  let wakes = 0;
  setHandler(wakeSignal, () => void wakes++);
  setHandler(query, () => progress);
  const limit = options.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  return cleanUpOnCancel(async (): Promise<string> => {
    const outcome = await unlessGivenUp(async (): Promise<string> => {
      for (;;) {
        const seen = wakes;
        const look = await steps.look();
        progress = look.progress;
        setCurrentDetails(progressInWords(progress, Date.now()));
        if (!options.working.includes(progress.phase)) return progress.phase;
        if (look.startable > 0) {
          await steps.request(look.startable);
          continue;
        }
        const sleep = Date.parse(progress.nextCheckAt!) - Date.now();
        await condition(() => wakes !== seen, Math.max(DRAIN_MIN_SLEEP_MS, sleep));
        const info = workflowInfo();
        if (info.historyLength >= limit || info.continueAsNewSuggested) {
          await condition(allHandlersFinished);
          return options.continueAsNew();
        }
      }
    }, steps.fail);
    return outcome;
  });
}
