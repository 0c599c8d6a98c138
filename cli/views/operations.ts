import type { Schemas } from '@drydock/client';
import { progressInWords } from '../../domain/progress';
import { dash, fields } from '../output';

export type Operation = Schemas['Operation'];

export function operationDetails(op: Operation): string {
  const pairs: [string, string][] = [
    ['ID', op.id],
    ['Kind', op.kind],
    ['Status', op.status],
    ['Node', dash(op.nodeId)],
    ...(op.poolId ? ([['Pool', op.poolId]] as [string, string][]) : []),
    ...(op.parentOperationId ? ([['Part of', op.parentOperationId]] as [string, string][]) : []),
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
  pairs.push(['Progress', progressInWords(op.progress)]);
  if (op.result) pairs.push(['Result', JSON.stringify(op.result)]);
  if (op.error) pairs.push(['Error', errorText(op.error)]);
  return fields(pairs);
}

/** What `operations cancel` says: cancelled, by whom. */
export function cancelled(op: Operation): string {
  const what = `${op.id} (${op.kind}${op.nodeId ? ` of ${op.nodeId}` : op.poolId ? ` of ${op.poolId}` : ''})`;
  return `cancelled ${what} by ${op.cancellation?.by ?? op.actor}`;
}

/** The operation's error as a sentence: its message when it has one. */
export function errorText(error: Record<string, unknown>): string {
  const { code, message } = error;
  if (typeof message === 'string') return typeof code === 'string' ? `${code}: ${message}` : message;
  return JSON.stringify(error);
}
