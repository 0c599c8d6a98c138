import type { OperationKind } from '../domain/operation';
import { PENDING_PHASE, type OperationProgress } from '../domain/progress';

/** What a workflow's `progress` query answers before its begin ran: the record's pending progress. */
export function waitingForWorker<K extends OperationKind>(kind: K): Extract<OperationProgress, { kind: K }> {
  return {
    kind,
    phase: PENDING_PHASE,
    startedAt: null,
    deadline: null,
    nextCheckAt: null,
    waitingFor: null,
  } as Extract<OperationProgress, { kind: K }>;
}
