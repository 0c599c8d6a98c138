import type { Schemas } from '@drydock/client';

type AuditEntry = Schemas['AuditEntry'];
type AuditColumns = Pick<AuditEntry, 'createdAt' | 'actor' | 'reason' | 'operationId'> & {
  type: string;
  target: string;
};

/** What an entry acted on, in one word: the node's hostname (else its id), else its pool. */
export function auditTarget(e: Pick<AuditEntry, 'nodeId' | 'hostname' | 'poolId'>): string {
  if (e.nodeId) return e.hostname ?? e.nodeId;
  return e.poolId ? `pool/${e.poolId}` : '-';
}

function auditColumns(e: AuditColumns): string {
  const reason = [e.reason, e.operationId ? `[${e.operationId}]` : null].filter(Boolean).join(' ');
  return [e.createdAt.padEnd(24), e.actor.padEnd(28), e.type.padEnd(32), e.target.padEnd(20), reason]
    .join('  ')
    .trimEnd();
}

/** One audit entry per line in fixed columns: time, actor, event, target, reason. */
export const auditLine = (e: AuditEntry) => auditColumns({ ...e, target: auditTarget(e) });

export const AUDIT_HEADER = auditColumns({
  createdAt: 'TIME',
  actor: 'ACTOR',
  type: 'EVENT',
  target: 'TARGET',
  reason: 'REASON',
  operationId: null,
});
