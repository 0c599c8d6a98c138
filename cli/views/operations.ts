import { describeBudget, type Budget } from '../../domain/budget';
import type { Schemas } from '@drydock/client';
import { clock, dash, fields } from '../output';

export type Operation = Schemas['Operation'];

export function operationDetails(op: Operation): string {
  const pairs: [string, string][] = [
    ['ID', op.id],
    ['Kind', op.kind],
    ['Status', op.status],
    ['Node', dash(op.nodeId)],
    ...(op.poolId ? ([['Pool', op.poolId]] as [string, string][]) : []),
    ['Actor', op.actor],
    ['Reason', dash(op.reason)],
    ['Workflow', op.workflowId],
    ['Created', op.createdAt],
    ['Completed', dash(op.completedAt)],
  ];
  if (op.idempotencyKey) pairs.push(['Idem. key', op.idempotencyKey]);
  if (op.cancellation) {
    const why = op.cancellation.reason ? `: ${op.cancellation.reason}` : '';
    pairs.push(['Cancel asked', `${op.cancellation.by} at ${op.cancellation.at}${why}`]);
  }
  if (op.status === 'running' || op.status === 'pending')
    pairs.push(['Progress', describeProgress(op.progress)]);
  if (op.result) pairs.push(['Result', JSON.stringify(op.result)]);
  if (op.error) pairs.push(['Error', errorText(op.error)]);
  return fields(pairs);
}

/** What `operations cancel` says: cancelled by whom, or asked and still cleaning up. */
export function cancelled(op: Operation): string {
  const what = `${op.id} (${op.kind}${op.nodeId ? ` of ${op.nodeId}` : op.poolId ? ` of ${op.poolId}` : ''})`;
  if (op.status === 'cancelled') return `cancelled ${what} by ${op.cancellation?.by ?? op.actor}`;
  return `asked to cancel ${what}; its workflow has not cleaned up yet (drydock operations show ${op.id})`;
}

/** The operation's error as a sentence: its message when it has one. */
export function errorText(error: Record<string, unknown>): string {
  const { code, message } = error;
  if (typeof message === 'string') return typeof code === 'string' ? `${code}: ${message}` : message;
  return JSON.stringify(error);
}

/**
 * A workflow's `progress` answer in a few words, e.g. `waiting for 2 allocations (first ends
 * 13:00Z); next check 12:05Z`. Kinds this does not know yet are shown by their `phase`.
 */
export function describeProgress(progress: unknown): string {
  if (progress === undefined || progress === null) return 'no progress reported yet';
  if (typeof progress !== 'object') return String(progress);
  const p = progress as Record<string, unknown>;
  const parts: string[] = [];
  const phase = typeof p.phase === 'string' ? p.phase : undefined;
  if (p.counts && typeof p.counts === 'object') {
    parts.push(`${phase ?? 'draining'}: ${describeCounts(p.counts as Record<string, unknown>)}`);
  } else if (phase === 'waiting' && typeof p.liveAllocationCount === 'number') {
    const n = p.liveAllocationCount;
    const ends = typeof p.earliestEndsAt === 'string' ? ` (first ends ${clock(p.earliestEndsAt)})` : '';
    parts.push(`waiting for ${n} allocation${n === 1 ? '' : 's'}${ends}`);
  } else if (phase === 'waiting-for-budget' && isBudget(p.budget)) {
    parts.push(`waiting for budget: ${describeBudget(p.budget)}`);
  } else if (phase) {
    parts.push(typeof p.step === 'string' ? `${phase}: ${p.step}` : phase);
  }
  if (Array.isArray(p.stepsDone) && p.stepsDone.length > 0) {
    parts.push(`${p.stepsDone.length} step${p.stepsDone.length === 1 ? '' : 's'} done`);
  }
  if (typeof p.attempt === 'number' && typeof p.action === 'string' && p.attempt > 0) {
    parts.push(`attempt ${p.attempt}: ${p.action}`);
  }
  if (typeof p.attemptDeadline === 'string') parts.push(`until ${clock(p.attemptDeadline)}`);
  if (Array.isArray(p.queued) && p.queued.length > 0) parts.push(`queued after it: ${p.queued.join(', ')}`);
  if (typeof p.nextCheckAt === 'string') parts.push(`next check ${clock(p.nextCheckAt)}`);
  if (typeof p.deadline === 'string') parts.push(`deadline ${clock(p.deadline)}`);
  return parts.length > 0 ? parts.join('; ') : JSON.stringify(progress);
}

function isBudget(value: unknown): value is Budget {
  const b = value as { max?: unknown; used?: unknown; holders?: unknown } | null;
  return typeof b?.max === 'number' && typeof b.used === 'number' && Array.isArray(b.holders);
}

/** A pool drain's counts: `12 drained, 5 draining (1 waiting for budget), 30 pending, 3 failed`. */
export function describeCounts(counts: Record<string, unknown>): string {
  const n = (key: string) => (typeof counts[key] === 'number' ? counts[key] : 0);
  const budget = n('waitingForBudget') > 0 ? ` (${n('waitingForBudget')} waiting for budget)` : '';
  return (
    `${n('drained')} drained, ${n('draining') + n('waitingForBudget')} draining${budget}, ` +
    `${n('pending')} pending, ${n('failed')} failed`
  );
}
