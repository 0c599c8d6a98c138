import { CancellationScope, proxyActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { beginDecommissionUpdate, decommissionProgressQuery, type DecommissionProgress } from './definitions';
import { awaitBegin } from './begin';
import { unlessGivenUp } from './refusal';

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
});

/**
 * decommission/<nodeId>: admission (the `begin` update), then each cleanup step as its own
 * idempotent activity, then the finalize transaction with the one `node.decommissioned`.
 */
export async function decommission(input: {
  nodeId: string;
}): Promise<'decommissioned' | 'failed' | 'refused' | 'never-began'> {
  const progress: DecommissionProgress = { phase: 'starting', step: null, stepsDone: [] };
  setHandler(decommissionProgressQuery, () => progress);
  const start = await awaitBegin(beginDecommissionUpdate, input.nodeId, (request) =>
    steps.admitDecommission(request),
  );
  if (start.begun === null) {
    progress.phase = 'refused';
    return start.outcome;
  }
  const operationId = start.begun.operation.id;

  const nodeId = input.nodeId;
  // Once admitted, nothing undoes a decommission: its steps run to the end whoever asks to cancel.
  const outcome = await CancellationScope.nonCancellable(() =>
    unlessGivenUp(
      async (): Promise<'decommissioned'> => {
        progress.phase = 'cleaning-up';
        const cleanup = [
          ['revokeNodeIdentity', () => steps.revokeNodeIdentity({ nodeId })],
          ['decommissionAccelerators', () => steps.decommissionAccelerators({ nodeId })],
          ['protectStorageRoots', () => steps.protectStorageRoots({ nodeId })],
          ['removeCurrentRows', () => steps.removeCurrentRows({ nodeId })],
        ] as const;
        for (const [name, run] of cleanup) {
          progress.step = name;
          setCurrentDetails(
            `cleaning up: ${name} (${progress.stepsDone.length + 1} of ${cleanup.length + 1})`,
          );
          await run();
          progress.stepsDone.push(name);
        }
        progress.step = 'finalizeDecommission';
        setCurrentDetails('finalizing');
        await steps.finalizeDecommission({ nodeId, operationId });
        progress.stepsDone.push('finalizeDecommission');
        progress.step = null;
        progress.phase = 'decommissioned';
        setCurrentDetails('decommissioned');
        return 'decommissioned';
      },
      (failure) => steps.failOperation({ nodeId, operationId, failure }),
    ),
  );
  if (outcome === 'failed') progress.phase = 'failed';
  return outcome;
}
