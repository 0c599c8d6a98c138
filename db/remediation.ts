import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES } from '../domain/command-status';
import type { RemediationWaitingFor } from '../domain/progress';
import type { AttemptOutcome, AttemptRecord, Storm } from '../domain/remediation';
import type { Tx } from './client';
import { applyNodeChange, type NodeRow } from './nodes';
import { finishOperation, type OperationRow } from './operations';
import { nodeCommands } from './schema';

/** Withdraws the remediation's rung commands the node has not answered. */
export async function cancelRungCommands(tx: Tx, operationId: string): Promise<void> {
  await tx
    .update(nodeCommands)
    .set({ status: 'cancelled', finishedAt: sql`now()` })
    .where(
      and(eq(nodeCommands.operationId, operationId), inArray(nodeCommands.status, OPEN_COMMAND_STATUSES)),
    );
}

/**
 * A remediation that failed, was cancelled or did not clear, on the locked node: its open rung
 * command withdrawn, maintenance on, `node.remediation.escalated` listing every attempt, the
 * operation `failed` or `cancelled`.
 */
export async function escalateRemediation(
  tx: Tx,
  node: NodeRow,
  op: OperationRow,
  input: {
    reason: string;
    attempts: AttemptRecord[];
    status: 'failed' | 'cancelled';
    storm?: Storm;
    /** The node's other conditions waiting for a remediation of their own. */
    queued?: string[];
    /** Who ended it; the remediation controller unless someone cancelled it. */
    actor?: string;
    /** What it last waited for, with its attempts as they ended (default: the record's, with these attempts). */
    waitingFor?: RemediationWaitingFor;
  },
): Promise<{ node: NodeRow; operation: OperationRow }> {
  await cancelRungCommands(tx, op.id);
  const condition = String((op.result as { condition?: string } | null)?.condition ?? '');
  const updated = await applyNodeChange(
    tx,
    node,
    {
      patch: { maintenance: true },
      event: {
        type: 'node.remediation.escalated',
        data: {
          reason: input.reason,
          condition,
          attempts: input.attempts,
          ...(input.storm ? { storm: input.storm } : {}),
          ...(input.queued?.length ? { queued: input.queued } : {}),
        },
      },
    },
    { actor: input.actor ?? 'system:remediation', reason: input.reason, operationId: op.id },
  );
  const waitingFor = input.waitingFor ?? {
    ...(op.waitingFor as RemediationWaitingFor),
    attempts: input.attempts,
  };
  const operation = await finishOperation(tx, op.id, input.status, {
    error: { reason: input.reason, attempts: input.attempts },
    waitingFor,
  });
  return { node: updated, operation: operation! };
}

/**
 * The attempts of a remediation as its commands record them, for a clean-up that runs without the
 * workflow's own list (its workflow is gone): a refused rung `refused`, the last rung (cut short)
 * `cancelled`, an earlier one `acked` or `timed-out` as its command was answered.
 */
export async function remediationAttempts(tx: Tx, operationId: string): Promise<AttemptRecord[]> {
  const rows = await tx
    .select()
    .from(nodeCommands)
    .where(eq(nodeCommands.operationId, operationId))
    .orderBy(asc(nodeCommands.createdAt));
  const outcome = (status: string, last: boolean): AttemptOutcome => {
    if (status === 'refused') return 'refused';
    if (last) return 'cancelled';
    return status === 'acked' ? 'acked' : 'timed-out';
  };
  return rows.map((command, index) => ({
    attempt: Number((command.data as { attempt?: number } | null)?.attempt ?? index + 1),
    action: command.action ?? 'unknown',
    commandId: command.id,
    outcome: outcome(command.status, index === rows.length - 1),
    refuseReason: command.refuseReason ?? null,
  }));
}
