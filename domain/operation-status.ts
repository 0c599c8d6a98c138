import { assertNever } from './assert-never';

/** An operation record's status (docs/concepts.md): open while pending or running, then final. */
export const OPERATION_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

/** The statuses an operation may move to from `status`. */
export function operationMoves(status: OperationStatus): readonly OperationStatus[] {
  switch (status) {
    case 'pending':
      return ['running', 'succeeded', 'failed', 'cancelled'];
    case 'running':
      return ['succeeded', 'failed', 'cancelled'];
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return [];
    default:
      return assertNever(status);
  }
}

export function isFinished(status: OperationStatus): boolean {
  return operationMoves(status).length === 0;
}

/** Unfinished statuses: at most one operation of a kind is in one of these per node. */
export const OPEN_OPERATION_STATUSES = OPERATION_STATUSES.filter((s) => !isFinished(s));

/** The final statuses an open operation ends in. */
export type FinalOperationStatus = Extract<OperationStatus, 'succeeded' | 'failed' | 'cancelled'>;
