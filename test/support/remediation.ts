import { and, asc, eq } from 'drizzle-orm';
import { nodeCommands } from '../../db/schema';
import { call } from './fixtures';
import type { Harness } from './harness';

/** The agent side of a remediation, spoken over the API with the node's credential. */
export function agentOf(h: Harness, credential: string) {
  return {
    report: (type: string, status: boolean, reason?: string) =>
      call(h, 'POST', '/v1/agent/conditions', {
        token: credential,
        body: { type, status, ...(reason ? { reason } : {}) },
      }),
    commands: async () =>
      (await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential })).body.items as {
        id: string;
        kind: string;
        action: string;
      }[],
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
