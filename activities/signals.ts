import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DbOrTx } from '../db/client';
import type { Logger } from '../observability/log';
import { waitingDrains } from '../db/queries/disruptions';
import { budgetFreedSignal, drainWorkflowId } from '../workflows/definitions';

// Signals sent after a commit, by the API's services and by activities alike. The change is
// committed whether or not a signal arrives: each workflow's periodic look sees it without one.

/** How long one signal may take to be accepted. */
const SIGNAL_TIMEOUT_MS = 2_000;
/**
 * How long a signal is tried again while Temporal cannot take it (a frontend restarting takes a few
 * seconds): a wake-up lost then would leave its workflow to its periodic look, minutes away.
 */
const SIGNAL_RETRY_FOR_MS = 15_000;

/** What sends these signals: a Temporal client, and the logger a lost one is reported to. */
export interface Signaller {
  temporal: Client;
  log: Logger;
}

/** Sends a signal to a workflow if it runs; a missing workflow is fine (its timer catches up). */
export async function signalIfRunning(
  deps: Signaller,
  workflowId: string,
  signal: string,
  args: unknown[] = [],
): Promise<void> {
  const giveUpAt = Date.now() + SIGNAL_RETRY_FOR_MS;
  for (;;) {
    try {
      await deps.temporal.withDeadline(Date.now() + SIGNAL_TIMEOUT_MS, () =>
        deps.temporal.workflow.getHandle(workflowId).signal(signal, ...args),
      );
      return;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      if (Date.now() + 500 < giveUpAt) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      deps.log.warn({ err: error, workflowId, signal }, 'signal failed; the workflow looks again later');
      return;
    }
  }
}

/**
 * Tells the drains waiting for a slot of the pool's disruption budget to look again, after the
 * commit of a change that may have given one back (`freeDisruption`: an uncordon, a delete, a
 * purge, a decommission); a node that held none wakes them for nothing — they find the budget as
 * it was. The slot was freed under the pool's lock, so a drain queued before it is listed here,
 * and one that counts after it takes the slot. It never throws: the change is committed, and a
 * waiting drain's periodic look (at most `DRAIN_MAX_SLEEP_MS` away) covers a wake-up lost here.
 */
export async function wakeBudgetWaiters(
  deps: Signaller & { db: DbOrTx },
  poolId: string | null,
): Promise<void> {
  if (!poolId) return;
  try {
    for (const nodeId of await waitingDrains(deps.db, poolId)) {
      await signalIfRunning(deps, drainWorkflowId(nodeId), budgetFreedSignal.name);
    }
  } catch (error) {
    deps.log.warn({ err: error, poolId }, 'waking the drains waiting on a pool failed');
  }
}

/**
 * After a cancellation's clean-up (`endCancelledOperation`), whichever door ran it: a purge the
 * node had already acknowledged is past cancelling and forgot the node instead (`succeeded`),
 * which gave back the node's slot; the waiting drains are told as on any purge.
 */
export async function wakeAfterCleanUp(
  deps: Signaller & { db: DbOrTx },
  ended: { kind: string; status: string; poolId: string | null } | undefined,
): Promise<void> {
  if (ended?.kind === 'purge' && ended.status === 'succeeded') await wakeBudgetWaiters(deps, ended.poolId);
}
