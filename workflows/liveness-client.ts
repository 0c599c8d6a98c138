import type { Client } from '@temporalio/client';
import { DEFAULT_LIVENESS, type LivenessSettings } from '../domain/liveness';
import { LIVENESS_SWEEP_WORKFLOW_ID, type LivenessSweepInput } from './definitions';
import { LifecycleOperationKey } from './search-attributes';

/** Starts the liveness controller unless it runs (one per namespace, or per `workflowId`). */
export async function ensureLivenessSweep(
  client: Client,
  taskQueue: string,
  options: { settings?: LivenessSettings; workflowId?: string; sweepTimeoutMs?: number } = {},
): Promise<void> {
  const input: LivenessSweepInput = {
    settings: options.settings ?? DEFAULT_LIVENESS,
    ...(options.sweepTimeoutMs === undefined ? {} : { sweepTimeoutMs: options.sweepTimeoutMs }),
  };
  await client.workflow.start('livenessSweep', {
    workflowId: options.workflowId ?? LIVENESS_SWEEP_WORKFLOW_ID,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    typedSearchAttributes: [{ key: LifecycleOperationKey, value: 'liveness-sweep' }],
    staticSummary: 'liveness controller: heartbeat leases, unreachable and lost nodes',
  });
}
