export const OPERATION_KINDS = ['drain', 'decommission', 'purge', 'remediation', 'pool-drain'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export { OPERATION_STATUSES, isFinished, type OperationStatus } from './operation-status';

export const ALLOCATION_KINDS = ['job', 'deployment', 'request', 'probe', 'lease', 'residency'] as const;
export type AllocationKind = (typeof ALLOCATION_KINDS)[number];
