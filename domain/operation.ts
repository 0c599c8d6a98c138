export const OPERATION_KINDS = ['drain', 'decommission', 'purge', 'remediation', 'pool-drain'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export { OPERATION_STATUSES, isFinished, type OperationStatus } from './operation-status';

export const ALLOCATION_KINDS = ['job', 'deployment', 'request', 'probe', 'lease', 'residency'] as const;
export type AllocationKind = (typeof ALLOCATION_KINDS)[number];

/**
 * A request to cancel a running operation, recorded on it before its workflow is cancelled so
 * the workflow's clean-up knows who asked. `children` (pool drains): what happens to the node
 * drains already running — left to finish, or cancelled too.
 */
export interface CancellationRequest {
  by: string;
  reason: string | null;
  at: string;
  children?: 'finish' | 'cancel';
}
