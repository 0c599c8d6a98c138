import { CancellationScope, proxyActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { progressInWords, type DecommissionProgress } from '../domain/progress';
import { cleanUpOnCancel } from './cancellation';
import { decommissionProgressQuery, type NodeOperationInput } from './definitions';
import { waitingForWorker } from './progress';
import { unlessGivenUp } from './refusal';

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
});

export type DecommissionOutcome = 'decommissioned' | 'cancelled' | 'failed';

/**
 * decommission/<nodeId>: runs the decommission its request admitted, one idempotent step after
 * another, each recorded on the operation, then the finalize transaction with the one
 * `node.decommissioned`. Cancelled before its first step (DELETE, or the Temporal UI), the node
 * goes back as it was; from the first step on (the point of no return) it runs to the end whoever
 * asks to cancel.
 */
export async function decommission(input: NodeOperationInput): Promise<DecommissionOutcome> {
  let progress: DecommissionProgress = waitingForWorker('decommission');
  setHandler(decommissionProgressQuery, () => progress);
  const ids = { nodeId: input.nodeId, operationId: input.operationId };
  const outcome = await cleanUpOnCancel(async () => {
    progress = await steps.beginDecommission({ operationId: input.operationId });
    // It ended before this run got to it (a cancel before any worker took it, or, in a workflow
    // task replayed after its steps ran, its own end): as the record says.
    if (progress.phase !== 'cleaning-up') return outcomeOf(progress);
    return CancellationScope.nonCancellable(() =>
      unlessGivenUp(
        async (): Promise<DecommissionOutcome> => {
          const run = [
            steps.revokeNodeIdentity,
            steps.decommissionAccelerators,
            steps.protectStorageRoots,
            steps.removeCurrentRows,
            steps.finalizeDecommission,
          ];
          for (const step of run) {
            setCurrentDetails(progressInWords(progress, Date.now()));
            progress = await step(ids);
            // A cancel before the point of no return ended it: the steps find it so.
            if (progress.phase !== 'cleaning-up') break;
          }
          setCurrentDetails(progressInWords(progress, Date.now()));
          return outcomeOf(progress);
        },
        (failure) => steps.failOperation({ ...ids, failure }),
      ),
    );
  });
  if (outcome === 'failed') progress = { ...progress, phase: 'failed' };
  return outcome;
}

/** How the decommission ended, as its record says. */
function outcomeOf(progress: DecommissionProgress): DecommissionOutcome {
  if (progress.phase === 'decommissioned' || progress.phase === 'failed') return progress.phase;
  return 'cancelled';
}
