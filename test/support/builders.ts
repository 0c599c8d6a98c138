import { eq } from 'drizzle-orm';
import { nodes } from '../../db/schema';
import type { DrainProgress } from '../../domain/progress';
import { drainProgressQuery, drainWorkflowId } from '../../workflows/definitions';
import { OperationIdKey } from '../../workflows/search-attributes';
import { joinedNode } from './agents';
import { call, seedNode, seedPool, type Reply } from './fixtures';
import { eventually, type Harness } from './harness';

/**
 * `POST /v1/allocations` of a job for `tenantId` on `nodeId`, whatever the answer (`allocate` is for
 * placements that must pass).
 */
export function placeAllocation(h: Harness, nodeId: string, tenantId = 'acme', token?: string | null) {
  return call(h, 'POST', '/v1/allocations', { token, body: { nodeId, tenantId, kind: 'job' } });
}

/** One agent heartbeat with `credential` (null sends none): running, or `offline` as `stop` says goodbye. */
export function heartbeat(h: Harness, credential: string | null, state?: 'offline'): Promise<Reply> {
  return call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: state ? { state } : {} });
}

/** The agent's long poll for its commands, `wait` seconds at the most. */
export function pollCommands(h: Harness, credential: string | null, wait = 0): Promise<Reply> {
  return call(h, 'GET', `/v1/agent/commands?wait=${wait}`, { token: credential });
}

/** The agent's answer to a command: done (`ack`) or `refuse`d, with the body it sends. */
export function answerCommand(
  h: Harness,
  credential: string,
  commandId: string,
  answer: 'ack' | 'refuse' = 'ack',
  body: Record<string, unknown> = {},
): Promise<Reply> {
  return call(h, 'POST', `/v1/agent/commands/${commandId}/${answer}`, { token: credential, body });
}

/** `POST /v1/nodes/{id}/purge` with its confirmation (and `force`, Idempotency-Key when given), as the operator (or `token`) sends it. */
export function purge(
  h: Harness,
  nodeId: string,
  options: { token?: string | null; reason?: string; force?: boolean; idempotencyKey?: string } = {},
) {
  const { token, idempotencyKey, ...rest } = options;
  return call(h, 'POST', `/v1/nodes/${nodeId}/purge`, {
    token,
    body: { confirm: true, ...rest },
    ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
  });
}

/** The node as `GET /v1/nodes/{id}` shows it to the operator. */
export async function readNode(h: Harness, nodeId: string) {
  return (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
}

/** Writes node columns straight into the database, as a controller or a fault would have. */
export async function setNode(h: Harness, nodeId: string, columns: Partial<typeof nodes.$inferInsert>) {
  await h.db.update(nodes).set(columns).where(eq(nodes.id, nodeId));
}

/** A pool of `tenantId` (left as it is if it exists) and one adopted node in it; returns the node's id. */
export async function seedPoolNode(h: Harness, poolId: string, tenantId = 'acme'): Promise<string> {
  await seedPool(h, { id: poolId, tenantId });
  return seedNode(h, { poolId, tenantId });
}

/** A pool of `tenantId` (left as it is if it exists) and one node joined into it through the API. */
export async function joinedPoolNode(h: Harness, poolId: string, tenantId = 'acme') {
  await seedPool(h, { id: poolId, tenantId });
  return joinedNode(h, poolId);
}

/** The authorization header of a bearer token, for requests made without `call`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The drain's `progress` query answer, or undefined when its workflow cannot be asked. */
export function drainProgress(h: Harness, nodeId: string): Promise<DrainProgress | undefined> {
  return h.temporal.workflow
    .getHandle(drainWorkflowId(nodeId))
    .query(drainProgressQuery)
    .catch(() => undefined);
}

/** `GET /v1/operations/{id}` once the operation matches `until` (by default: a worker began it). */
export async function operationWhen(
  h: Harness,
  operationId: string,
  until: (op: any) => boolean = (op) => op.status === 'running',
  timeoutMs?: number,
): Promise<any> {
  return eventually(async () => {
    const op = (await call(h, 'GET', `/v1/operations/${operationId}`)).body;
    return until(op) ? op : undefined;
  }, timeoutMs);
}

/**
 * The result of the workflow `workflowId` — of the run of `operationId` when given — once a
 * worker's dispatcher has started it (a request is answered before its workflow exists: until then
 * Temporal does not know the id, or knows only the run of the operation before).
 */
export async function workflowResult(h: Harness, workflowId: string, operationId?: string): Promise<unknown> {
  const handle = h.temporal.workflow.getHandle(workflowId);
  const runId = await eventually(async () => {
    const run = await handle.describe().catch(() => undefined);
    if (!run) return undefined;
    const runs = operationId === undefined || run.typedSearchAttributes.get(OperationIdKey) === operationId;
    return runs ? run.runId : undefined;
  }, 30_000);
  return h.temporal.workflow.getHandle(workflowId, runId).result();
}
