import { continueAsNew, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PURGE_CHECKS_PER_RUN, purgeProgressQuery, type NodeOperationInput } from './definitions';
import { lookUntilEnded } from './looks';

const { lookAtPurge, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

export type PurgeOutcome = 'purged' | 'cancelled' | 'failed';

/**
 * purge/<nodeId>: the signed command was queued by the request; the workflow waits, as long as it
 * takes, for the node's answer, woken by it (the ack and refuse routes) or looking once a minute.
 * Ack → the node is forgotten (`node.purged`); refusal → it stays purging; a DELETE of the purging
 * node ends it `cancelled`. A long wait continues as new every `PURGE_CHECKS_PER_RUN` looks.
 */
export async function purge(input: NodeOperationInput): Promise<PurgeOutcome> {
  const ids = { nodeId: input.nodeId, operationId: input.operationId };
  const outcome = await lookUntilEnded(
    'purge',
    purgeProgressQuery,
    {
      look: () => lookAtPurge(ids),
      fail: (failure) => failOperation({ ...ids, failure }),
    },
    {
      ended: ['purged', 'cancelled', 'failed'],
      limit: input.continueAsNewAfter ?? PURGE_CHECKS_PER_RUN,
      continueAsNew: () => continueAsNew<typeof purge>(input),
    },
  );
  return outcome as PurgeOutcome;
}
