import { DrydockError } from '../../domain/errors';
import { recordAgentSession } from '../../db/agent-sessions';
import { renewalNonce, renewCredential } from '../../db/credential-renewal';
import type { NodeRow } from '../../db/nodes';
import type { AppDeps } from '../env';

/**
 * Notes the agent run a heartbeat came from (db/agent-sessions.ts). Only a heartbeat from another
 * run than the one the node last had costs a transaction; one that quarantines the node is
 * refused, as every later call with its credentials is.
 */
export async function noteAgentSession(
  deps: Pick<AppDeps, 'db' | 'wakeups' | 'heartbeats' | 'duplicateSessions'>,
  node: NodeRow,
  sessionId: string,
): Promise<void> {
  if (node.agentSessionId === sessionId) return;
  const { changed, quarantined } = await deps.db.transaction((tx) =>
    recordAgentSession(tx, node.id, sessionId, deps.duplicateSessions),
  );
  // This process forgets the node it keeps now; the others when the change's NOTIFY reaches them.
  if (changed) deps.wakeups.wake(node.id);
  if (!quarantined) return;
  deps.heartbeats.forget(node.id);
  throw new DrydockError(
    'UNAUTHENTICATED',
    `node ${node.id} is quarantined: its identity is in use on two machines; find the copy, then join the real machine again (drydock-agent join --reset --yes)`,
    { reason: 'duplicate-identity' },
  );
}

/** A nonce for the credential to sign (db/credential-renewal.ts). */
export function credentialNonce(deps: Pick<AppDeps, 'db'>, credentialId: string) {
  return renewalNonce(deps.db, credentialId);
}

/** The credential renewed for the signed nonce (db/credential-renewal.ts). */
export function renewNodeCredential(
  deps: Pick<AppDeps, 'db' | 'clusterId'>,
  input: { node: NodeRow; credentialId: string; nonce: string; signature: string },
) {
  return renewCredential(deps.db, { ...input, clusterId: deps.clusterId });
}
