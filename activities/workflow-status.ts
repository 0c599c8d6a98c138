import { WorkflowNotFoundError, type Client } from '@temporalio/client';

/** How long one describe may take (Temporal is slow or away: the caller decides what that means). */
const DESCRIBE_TIMEOUT_MS = 5_000;

/**
 * The status of the workflow's latest run, as Temporal names it (`RUNNING`, `TERMINATED`,
 * `TIMED_OUT`, …), or `NOT_FOUND` when Temporal does not know it (never started, or past its
 * retention). Throws when Temporal does not answer within `DESCRIBE_TIMEOUT_MS`.
 */
export async function workflowStatus(temporal: Client, workflowId: string): Promise<string> {
  try {
    const described = await temporal.withDeadline(Date.now() + DESCRIBE_TIMEOUT_MS, () =>
      temporal.workflow.getHandle(workflowId).describe(),
    );
    return described.status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'NOT_FOUND';
    throw error;
  }
}
