import { joinedNode } from './agents';
import { call, seedNode, seedPool, type Reply } from './fixtures';
import type { Harness } from './harness';

/** The body of `POST /v1/allocations`: a job for `tenantId` on `nodeId`, unless `extra` says more. */
export function allocationBody(
  nodeId: string,
  tenantId = 'acme',
  extra: { kind?: 'job' | 'deployment'; endsAt?: string } = {},
) {
  return { nodeId, tenantId, kind: 'job' as const, ...extra };
}

/** Places an allocation and returns the reply whatever it is (`allocate` is for placements that must pass). */
export function placeAllocation(h: Harness, nodeId: string, tenantId = 'acme', token?: string | null) {
  return call(h, 'POST', '/v1/allocations', { token, body: allocationBody(nodeId, tenantId) });
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

/** `POST /v1/nodes/{id}/purge` with its confirmation, as the operator (or `token`) sends it. */
export function purge(h: Harness, nodeId: string, options: { token?: string | null; reason?: string } = {}) {
  const { token, ...rest } = options;
  return call(h, 'POST', `/v1/nodes/${nodeId}/purge`, { token, body: { confirm: true, ...rest } });
}

/** A pool of `tenantId` (left as it is if it exists) and one adopted node in it; returns the node's id. */
export async function seedPoolNode(
  h: Harness,
  poolId: string,
  tenantId = 'acme',
  node: Omit<Parameters<typeof seedNode>[1], 'poolId' | 'tenantId'> = {},
): Promise<string> {
  await seedPool(h, { id: poolId, tenantId });
  return seedNode(h, { poolId, tenantId, ...node });
}

/** A pool of `tenantId` (left as it is if it exists) and one node joined into it through the API. */
export async function joinedPoolNode(h: Harness, poolId: string, tenantId = 'acme') {
  await seedPool(h, { id: poolId, tenantId });
  return joinedNode(h, poolId);
}

/** The authorization header of a bearer token, for requests made without `call`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
