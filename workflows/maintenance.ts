import { continueAsNew, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { maintenanceProgressQuery, type NodeOperationInput } from './definitions';
import { lookUntilEnded } from './looks';

const { lookAtMaintenance, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** How a maintenance's workflow ended: its operation's final phase. */
export type MaintenanceOutcome = 'succeeded' | 'failed' | 'cancelled';

/**
 * maintenance/<nodeId>: carries out the plan its request recorded, step after step
 * (docs/lifecycle/maintenance.md). Each look (one transaction) begins the current step or finds
 * where it stands — its drain ended, its command answered, the node back on a new boot, every
 * probe healthy long enough — and moves on; between looks it sleeps until the step's deadline, or
 * until something woke it: its drain's end, its command's result, the node's new boot or a
 * condition it reported, a cancel.
 */
export async function maintenance(input: NodeOperationInput): Promise<MaintenanceOutcome> {
  const ids = { nodeId: input.nodeId, operationId: input.operationId };
  const outcome = await lookUntilEnded(
    'maintenance',
    maintenanceProgressQuery,
    {
      look: () => lookAtMaintenance(ids),
      fail: (failure) => failOperation({ ...ids, failure }),
    },
    {
      ended: ['succeeded', 'failed', 'cancelled'],
      limit: input.continueAsNewAfter ?? 500,
      continueAsNew: () => continueAsNew<typeof maintenance>(input),
    },
  );
  return outcome as MaintenanceOutcome;
}
