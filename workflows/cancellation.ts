import {
  CancellationScope,
  isCancellation,
  proxyLocalActivities,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AttemptRecord } from '../domain/remediation';

const { cleanUpCancelled } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/**
 * Runs a lifecycle workflow's body; when Temporal cancels the workflow (the Web UI's "Request
 * Cancellation", or any client's cancel), runs the one clean-up (`cleanUpCancelled`, one
 * transaction: the operation `cancelled`, the node put back, one event), shielded from the
 * cancellation, and answers `cancelled`. DELETE /v1/operations/{id} runs the same clean-up in its
 * own transaction and wakes the workflow instead, which then finds its record finished.
 */
export async function cleanUpOnCancel<T>(
  body: () => Promise<T>,
  extra: () => { attempts?: AttemptRecord[] } = () => ({}),
): Promise<T | 'cancelled'> {
  try {
    return await body();
  } catch (error) {
    if (!isCancellation(error)) throw error;
    await CancellationScope.nonCancellable(() => cleanUpCancelled(extra()));
    setCurrentDetails('cancelled');
    return 'cancelled';
  }
}
