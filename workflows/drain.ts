import { continueAsNew, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { drainProgressQuery, type NodeOperationInput } from './definitions';
import { lookUntilEnded } from './looks';

// Local activities: each step is one short transaction, and running it inside the workflow task
// saves the activity-task round trip between a release and `node.drained` (bench: drain-reaction).
const { lookAtDrain, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** How a drain's workflow ended: its operation's final phase. */
export type DrainOutcome = 'drained' | 'cancelled' | 'failed';

/**
 * drain/<nodeId>: runs the drain its request recorded. Each look (one transaction) finds the node
 * drained, cancelled, past its deadline (then releases what is live, within the pool's disruption
 * budget), or still waiting, and writes that on the operation; between looks it sleeps until the
 * look's `nextCheckAt`, or until something woke it (a release, an uncordon, a freed budget slot).
 */
export async function drain(input: NodeOperationInput): Promise<DrainOutcome> {
  const ids = { nodeId: input.nodeId, operationId: input.operationId };
  const outcome = await lookUntilEnded(
    'drain',
    drainProgressQuery,
    {
      look: () => lookAtDrain(ids),
      fail: (failure) => failOperation({ ...ids, failure }),
    },
    {
      ended: ['drained', 'cancelled', 'failed'],
      limit: input.continueAsNewAfter ?? 500,
      continueAsNew: () => continueAsNew<typeof drain>(input),
    },
  );
  return outcome as DrainOutcome;
}
