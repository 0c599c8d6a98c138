import { continueAsNew, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { runChildren } from './children';
import { poolMaintenanceProgressQuery, type PoolOperationInput } from './definitions';

// Local activities: short transactions, run inside the workflow task (no activity-task round trip).
const { lookAtPoolMaintenance, requestNodeMaintenances, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

export type PoolMaintenanceOutcome = 'succeeded' | 'failed' | 'cancelled';

/**
 * pool-maintenance/<poolId>: a rolling maintenance (docs/lifecycle/maintenance.md). Carries out its
 * plan on each node its request selected, each as an ordinary maintenance `maintenance/<nodeId>`
 * with its own record (its `parentOperationId` is this one's), at most `maxConcurrent` at a time;
 * paused once `maxFailures` of them failed (the running ones finish; a resume wakes it). It looks
 * again only when a node maintenance ends or a resume wakes it, or at the record's `nextCheckAt`.
 */
export async function poolMaintenance(input: PoolOperationInput): Promise<PoolMaintenanceOutcome> {
  const outcome = await runChildren(
    'pool-maintenance',
    poolMaintenanceProgressQuery,
    {
      look: () => lookAtPoolMaintenance({ operationId: input.operationId }),
      request: (count) => requestNodeMaintenances({ operationId: input.operationId, count }),
      fail: (failure) => failOperation({ nodeId: null, operationId: input.operationId, failure }),
    },
    {
      working: ['maintaining', 'paused'],
      continueAsNewAfter: input.continueAsNewAfter,
      continueAsNew: () => continueAsNew<typeof poolMaintenance>(input),
    },
  );
  return outcome as PoolMaintenanceOutcome;
}
