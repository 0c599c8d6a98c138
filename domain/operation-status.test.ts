import { describe, expect, it } from 'vitest';
import {
  isFinished,
  OPEN_OPERATION_STATUSES,
  OPERATION_STATUSES,
  operationMoves,
  type OperationStatus,
} from './operation-status';

describe('the operation status table', () => {
  it('moves open operations forward to a final status, and final ones nowhere', () => {
    const expected: Record<OperationStatus, OperationStatus[]> = {
      pending: ['running', 'succeeded', 'failed', 'cancelled'],
      running: ['succeeded', 'failed', 'cancelled'],
      succeeded: [],
      failed: [],
      cancelled: [],
    };
    for (const from of OPERATION_STATUSES) {
      for (const to of OPERATION_STATUSES) {
        expect(operationMoves(from).includes(to), `${from} -> ${to}`).toBe(expected[from].includes(to));
      }
    }
  });

  it('calls finished exactly the statuses with no move left', () => {
    expect(OPERATION_STATUSES.filter(isFinished)).toEqual(['succeeded', 'failed', 'cancelled']);
    expect(OPEN_OPERATION_STATUSES).toEqual(['pending', 'running']);
  });

  it('refuses an unknown status loudly', () => {
    expect(() => operationMoves('paused' as OperationStatus)).toThrow('unhandled case: "paused"');
  });
});
