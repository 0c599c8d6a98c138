import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { nodeDrainEndedSignal, type NodeDrainReport } from './definitions';

/**
 * Tells the pool drain that started this drain as its child how it ended. The signal goes to the
 * parent's latest run (it may have continued as new); a parent that has ended is fine to miss, and
 * the pool drain also reads the drains' records, so a lost report only delays it.
 */
export async function reportToParent(report: NodeDrainReport): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  try {
    await getExternalWorkflowHandle(parent.workflowId).signal(nodeDrainEndedSignal, report);
  } catch {
    // The parent is gone: nobody waits for this report.
  }
}
