import { decommissionWorkflowId } from '../../workflows/definitions';
import { createToken, join } from './agents';
import { workflowResult } from './builders';
import { call } from './fixtures';
import type { Harness } from './harness';

export const INVENTORY = {
  accelerators: [
    { model: 'H100', serial: 'GPU-0001' },
    { model: 'H100', serial: 'GPU-0002' },
  ],
  storageRoots: [{ path: '/var/lib/drydock', bytes: 2_000_000_000 }],
};

/** A node that joined with inventory, heartbeated, and whose agent said goodbye: ready to go. */
export async function retiredNode(
  h: Harness,
  poolId: string,
  hostname = `gpu-${Math.random().toString(36).slice(2, 7)}`,
) {
  const token = await createToken(h, { poolId });
  const joined = await join(h, { token: token.secret, hostname, inventory: INVENTORY });
  const { nodeId, credential } = joined.body as { nodeId: string; credential: string };
  await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: {} });
  await h.deps.heartbeats.flush();
  await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: { state: 'offline' } });
  return { nodeId, credential, hostname };
}

export async function preview(h: Harness, nodeId: string, token?: string) {
  return call(h, 'POST', `/v1/nodes/${nodeId}/decommission/preview`, { token });
}

export async function execute(
  h: Harness,
  nodeId: string,
  body: Record<string, unknown>,
  key: string | null = `key-${nodeId.slice(-12)}`,
  token?: string,
) {
  return call(h, 'POST', `/v1/nodes/${nodeId}/decommission`, {
    token,
    body,
    headers: key ? { 'idempotency-key': key } : {},
  });
}

/** Execute with exactly what a fresh preview shows. */
export async function executeFromPreview(
  h: Harness,
  nodeId: string,
  extra: Record<string, unknown> = {},
  key?: string,
) {
  const p = (await preview(h, nodeId)).body;
  const body = executeBody(p, extra);
  return { reply: await execute(h, nodeId, body, key), body, preview: p };
}

/** The execute body that presents exactly what `shown` (a preview) showed. */
export function executeBody(shown: Record<string, any>, extra: Record<string, unknown> = {}) {
  return {
    confirm: shown.hostname,
    nodeGeneration: shown.nodeGeneration,
    dependencyDigest: shown.dependencyDigest,
    operator: 'alice',
    reason: 'EOL: leaving the fleet',
    ...extra,
  };
}

/**
 * The decommission workflow's result (of the run of `operationId` when given), once the
 * dispatcher has started it: the request is answered before its workflow exists.
 */
export async function decommissioned(h: Harness, nodeId: string, operationId?: string) {
  return workflowResult(h, decommissionWorkflowId(nodeId), operationId);
}
