import {
  allHandlersFinished,
  condition,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type QueryDefinition,
} from '@temporalio/workflow';
import type { StepFailure } from '../activities/failure';
import type { OperationKind } from '../domain/operation';
import { DRAIN_MIN_SLEEP_MS, progressInWords, type OperationProgress } from '../domain/progress';
import { cleanUpOnCancel } from './cancellation';
import { wakeSignal } from './definitions';
import { waitingForWorker } from './progress';
import { unlessGivenUp } from './refusal';

type ProgressOf<K extends OperationKind> = Extract<OperationProgress, { kind: K }>;

/** What a workflow that only looks at its record does: look, and end a look that gave up. */
export interface LookSteps<P> {
  /**
   * One look, one transaction: the progress it wrote on the operation. The first begins it
   * (`pending` → `running`), or finds it ended before any worker took it.
   */
  look: () => Promise<P>;
  /** A look gave up for good: the operation ends `failed` (activities/failure.ts). */
  fail: (failure: StepFailure) => Promise<unknown>;
}

/**
 * A workflow that looks at its operation until it ends (a drain, a purge): each look writes where
 * the operation stands and when to look next; between looks it sleeps until then, or until the
 * outbox wakes it (its record changed). It answers `progress` with what the last look wrote, ends
 * with the operation's final phase, and continues as new after `limit` looks, or when Temporal
 * suggests it: the record carries everything, so the next run only looks again.
 */
export function lookUntilEnded<K extends OperationKind>(
  kind: K,
  query: QueryDefinition<ProgressOf<K>>,
  steps: LookSteps<ProgressOf<K>>,
  options: { ended: readonly string[]; limit: number; continueAsNew: () => Promise<never> },
): Promise<string> {
  let progress: ProgressOf<K> = waitingForWorker(kind);
  let wakes = 0;
  setHandler(wakeSignal, () => void wakes++);
  setHandler(query, () => progress);
  return cleanUpOnCancel(async (): Promise<string> => {
    for (let looks = 1; ; looks++) {
      const seen = wakes;
      const looked = await unlessGivenUp(steps.look, steps.fail);
      if (looked === 'failed') {
        progress = { ...progress, phase: 'failed', nextCheckAt: null };
        return 'failed';
      }
      progress = looked;
      setCurrentDetails(progressInWords(progress, Date.now()));
      if (options.ended.includes(progress.phase)) return progress.phase;
      const sleep = progress.nextCheckAt ? Date.parse(progress.nextCheckAt) - Date.now() : 0;
      await condition(() => wakes !== seen, Math.max(DRAIN_MIN_SLEEP_MS, sleep));
      if (looks >= options.limit || workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        return options.continueAsNew();
      }
    }
  });
}
