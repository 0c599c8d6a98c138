import { eq } from 'drizzle-orm';
import { quarantine } from '../domain/controls';
import type { Tx } from './client';
import { appendEvent } from './events';
import { revokeIdentity } from './identity';
import { applyNodeChange, lockNode } from './nodes';
import { nodes } from './schema';
import { wakeNode } from './wakeups';

/** When one identity's alternating agent runs quarantine it (DRYDOCK_DUPLICATE_SESSION_*). */
export interface DuplicateSessionRules {
  /** More alternations than this within the window quarantine the identity. */
  alternations: number;
  windowMs: number;
}

export const DEFAULT_DUPLICATE_SESSION_RULES: DuplicateSessionRules = { alternations: 3, windowMs: 600_000 };

/**
 * Records that the node's heartbeats now come from agent run `sessionId`, in the caller's
 * transaction. A new run after another is a restart; going back to the run before the current one
 * is an alternation — two machines holding one identity — and says `security.node.duplicate-session`.
 * More than `rules.alternations` of them within `rules.windowMs` quarantine the node: every
 * credential and certificate revoked (`duplicate-identity`), a new identity generation, the
 * NoSchedule reason `quarantined`, `security.node.quarantined`. Returns whether the node's run
 * changed, and whether it quarantined.
 */
export async function recordAgentSession(
  tx: Tx,
  nodeId: string,
  sessionId: string,
  rules: DuplicateSessionRules,
  now = new Date(),
): Promise<{ changed: boolean; quarantined: boolean }> {
  const node = await lockNode(tx, nodeId);
  const current = node.agentSessionId;
  if (current === sessionId) return { changed: false, quarantined: false };
  const since = now.getTime() - rules.windowMs;
  const recent = node.sessionAlternations.filter((at) => Date.parse(at) > since);
  const alternated = current !== null && node.previousAgentSessionId === sessionId;
  const alternations = alternated ? [...recent, now.toISOString()] : recent;
  const [updated] = await tx
    .update(nodes)
    .set({ agentSessionId: sessionId, previousAgentSessionId: current, sessionAlternations: alternations })
    .where(eq(nodes.id, nodeId))
    .returning();
  if (!alternated) return { changed: true, quarantined: false };
  await appendEvent(tx, {
    nodeId,
    tenantId: node.tenantId,
    type: 'security.node.duplicate-session',
    actor: 'system:identity',
    data: {
      sessionId,
      otherSessionId: current,
      alternations: alternations.length,
      windowSeconds: rules.windowMs / 1000,
    },
  });
  if (alternations.length <= rules.alternations) return { changed: true, quarantined: false };
  const revoked = await revokeIdentity(tx, nodeId, 'duplicate-identity');
  const change = quarantine(node, node.identityGeneration, {
    sessionIds: [current, sessionId],
    alternations: alternations.length,
    revoked,
  });
  await applyNodeChange(tx, updated!, change, {
    actor: 'system:identity',
    reason: `one identity seen from two agent runs ${alternations.length} times in ${rules.windowMs / 60_000} min: a copied identity`,
  });
  await wakeNode(tx, nodeId);
  return { changed: true, quarantined: true };
}
