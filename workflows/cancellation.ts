import {
  CancellationScope,
  isCancellation,
  patched,
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
 * Guards the clean-up a cancelled workflow runs: a history recorded before it (the workflow then
 * ended as cancelled with no step) replays without it.
 */
export const CANCEL_CLEAN_UP_PATCH = 'cancel-clean-up';

/**
 * Runs a lifecycle workflow's body; when Temporal cancels the workflow — DELETE
 * /v1/operations/{id}, or a cancel from the Web UI or any client — runs the one clean-up
 * (`cleanUpCancelled`, one transaction: the operation `cancelled`, the node put back, one event),
 * shielded from the cancellation, and answers `cancelled`. A workflow with no operation yet has
 * nothing to clean up (the clean-up finds none).
 */
export async function cleanUpOnCancel<T>(
  body: () => Promise<T>,
  extra: () => { attempts?: AttemptRecord[] } = () => ({}),
): Promise<T | 'cancelled'> {
  try {
    return await body();
  } catch (error) {
    if (!isCancellation(error) || !patched(CANCEL_CLEAN_UP_PATCH)) throw error;
    await CancellationScope.nonCancellable(() => cleanUpCancelled(extra()));
    setCurrentDetails('cancelled');
    return 'cancelled';
  }
}
