export const OPERATION_KINDS = ['drain', 'decommission', 'purge', 'remediation', 'pool-drain'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export const OPERATION_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export function isFinished(status: OperationStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'cancelled';
}

export const ALLOCATION_KINDS = ['job', 'deployment', 'request', 'probe', 'lease', 'residency'] as const;
export type AllocationKind = (typeof ALLOCATION_KINDS)[number];
