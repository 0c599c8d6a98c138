import { and, asc, eq } from 'drizzle-orm';
import { nodeCommands } from '../../db/schema';
import { operationWhen } from './builders';
import { call } from './fixtures';
import { eventually, type Harness } from './harness';

/**
 * How long a test waits for what a worker does after a request: its dispatcher starts the workflow,
 * whose first steps send the rung. Seconds on a loaded machine; the alternative is a 10-minute
 * attempt timeout.
 */
export const WORKER_BOUND_MS = 30_000;

/** The agent side of a remediation, spoken over the API with the node's credential. */
export function agentOf(h: Harness, credential: string) {
  const commands = async () =>
    (await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential })).body.items as {
      id: string;
      kind: string;
      action: string;
    }[];
  return {
    report: (type: string, status: boolean, reason?: string) =>
      call(h, 'POST', '/v1/agent/conditions', {
        token: credential,
        body: { type, status, ...(reason ? { reason } : {}) },
      }),
    commands,
    /** The first command the node's poll gets (of `action`, when given), once a worker sent it. */
    nextCommand: (action?: string) =>
      eventually(
        async () => (await commands()).find((c) => action === undefined || c.action === action),
        WORKER_BOUND_MS,
      ),
    ack: (id: string) => call(h, 'POST', `/v1/agent/commands/${id}/ack`, { token: credential, body: {} }),
    refuse: (id: string, reason: string) =>
      call(h, 'POST', `/v1/agent/commands/${id}/refuse`, { token: credential, body: { reason } }),
  };
}

/** The node's remediate commands, oldest first. */
export async function remediateCommands(h: Harness, nodeId: string) {
  return h.db
    .select()
    .from(nodeCommands)
    .where(and(eq(nodeCommands.nodeId, nodeId), eq(nodeCommands.kind, 'remediate')))
    .orderBy(asc(nodeCommands.createdAt), asc(nodeCommands.id));
}

/** The node's remediation operations as `GET /v1/operations` lists them, oldest first (ids grow). */
export async function remediationsOf(h: Harness, nodeId: string): Promise<any[]> {
  const items = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body
    .items as any[];
  return items.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** The node's remediation operation `opId` once its record matches `until` (by default: attempt 1 sent). */
export function remediationWhen(
  h: Harness,
  opId: string,
  until: (op: any) => boolean = (op) =>
    op.progress.phase === 'attempting' && op.progress.waitingFor.attempt === 1,
): Promise<any> {
  return operationWhen(h, opId, until, WORKER_BOUND_MS);
}

/**
 * The result of the workflow run that carries out the operation, once a worker's dispatcher started
 * it. The run is found through Temporal's visibility by its `OperationId` search attribute, not as
 * the latest run of its workflow id (builders' `workflowResult`): a remediation that ends requests
 * the next one, whose run of `remediation/<nodeId>` may begin before this one's result is asked.
 */
export async function operationRunResult(h: Harness, operationId: string): Promise<unknown> {
  const { workflowId } = (await call(h, 'GET', `/v1/operations/${operationId}`)).body as {
    workflowId: string;
  };
  const query = `WorkflowId = '${workflowId}' AND OperationId = '${operationId}'`;
  const runId = await eventually(
    async () => {
      for await (const run of h.temporal.workflow.list({ query })) return run.runId;
      return undefined;
    },
    WORKER_BOUND_MS,
    200,
  );
  return h.temporal.workflow.getHandle(workflowId, runId).result();
}
