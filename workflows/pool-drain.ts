import {
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DRAIN_MIN_SLEEP_MS, progressInWords, type PoolDrainProgress } from '../domain/progress';
import { cleanUpOnCancel } from './cancellation';
import { poolDrainProgressQuery, wakeSignal, type PoolOperationInput } from './definitions';
import { waitingForWorker } from './progress';
import { unlessGivenUp } from './refusal';

// Local activities: short transactions, run inside the workflow task (no activity-task round trip).
const { lookAtPoolDrain, requestNodeDrains, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** History events after which a run continues as new; well below Temporal's warning at 10,240. */
const DEFAULT_CONTINUE_AS_NEW_AFTER = 8_000;

export type PoolDrainOutcome = 'succeeded' | 'failed' | 'cancelled';

/**
 * pool-drain/<poolId>: drains the nodes its request selected, at most `maxConcurrent` at a time,
 * each as an ordinary drain `drain/<nodeId>` with its own operation record (its
 * `parentOperationId` is the pool drain's), requested through the outbox like any other. Each look
 * (one transaction) reads where every node stands from those records, writes it on the pool
 * drain's operation, and ends it once every node drained or failed. It looks again only when woken
 * (a node drain that ends, or that starts or stops waiting for the pool's disruption budget, wakes
 * it through the outbox), or at the record's `nextCheckAt`, minutes away: no poll.
 */
export async function poolDrain(input: PoolOperationInput): Promise<PoolDrainOutcome> {
  let progress: PoolDrainProgress = waitingForWorker('pool-drain');
  let wakes = 0;
  setHandler(wakeSignal, () => void wakes++);
  setHandler(poolDrainProgressQuery, () => progress);
  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  return cleanUpOnCancel(async (): Promise<PoolDrainOutcome> => {
    const outcome = await unlessGivenUp(
      async (): Promise<PoolDrainOutcome> => {
        for (;;) {
          const seen = wakes;
          const look = await lookAtPoolDrain({ operationId: input.operationId });
          progress = look.progress;
          setCurrentDetails(progressInWords(progress, Date.now()));
          if (progress.phase !== 'draining') return progress.phase as PoolDrainOutcome;
          if (look.startable > 0) {
            await requestNodeDrains({ operationId: input.operationId, count: look.startable });
            continue;
          }
          const sleep = Date.parse(progress.nextCheckAt!) - Date.now();
          await condition(() => wakes !== seen, Math.max(DRAIN_MIN_SLEEP_MS, sleep));
          const info = workflowInfo();
          if (info.historyLength >= limit || info.continueAsNewSuggested) {
            await condition(allHandlersFinished);
            return continueAsNew<typeof poolDrain>(input);
          }
        }
      },
      // A pool drain has no node of its own to repair: its operation ends failed, with the reason.
      (failure) => failOperation({ nodeId: null, operationId: input.operationId, failure }),
    );
    return outcome;
  });
}
