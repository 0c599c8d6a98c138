import { continueAsNew, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { runChildren } from './children';
import { poolDrainProgressQuery, type PoolOperationInput } from './definitions';

// Local activities: short transactions, run inside the workflow task (no activity-task round trip).
const { lookAtPoolDrain, requestNodeDrains, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

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
  const outcome = await runChildren(
    'pool-drain',
    poolDrainProgressQuery,
    {
      look: () => lookAtPoolDrain({ operationId: input.operationId }),
      request: (count) => requestNodeDrains({ operationId: input.operationId, count }),
      // A pool drain has no node of its own to repair: its operation ends failed, with the reason.
      fail: (failure) => failOperation({ nodeId: null, operationId: input.operationId, failure }),
    },
    {
      working: ['draining'],
      continueAsNewAfter: input.continueAsNewAfter,
      continueAsNew: () => continueAsNew<typeof poolDrain>(input),
    },
  );
  return outcome as PoolDrainOutcome;
}
