export const OPERATION_KINDS = [
  'drain',
  'decommission',
  'purge',
  'remediation',
  'pool-drain',
  'maintenance',
  'pool-maintenance',
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

/**
 * The operations of a pool, which run one operation of a node per selected node (its children,
 * `parentOperationId`): a cancel of one may cancel its children too (`children: "cancel"`).
 */
export const POOL_KINDS = ['pool-drain', 'pool-maintenance'] as const satisfies readonly OperationKind[];

export function isPoolKind(kind: OperationKind): kind is (typeof POOL_KINDS)[number] {
  return (POOL_KINDS as readonly OperationKind[]).includes(kind);
}

/**
 * The operations that end a node's life in the fleet: while one of them is open on a node, no other
 * operation starts there (a remediation's reboot could interrupt a purge's wipe; a drain would
 * fence a node that is leaving anyway).
 */
export const ENDING_KINDS = ['purge', 'decommission'] as const satisfies readonly OperationKind[];

export { OPERATION_STATUSES, isFinished, type OperationStatus } from './operation-status';

/**
 * The workflow that runs an operation of each kind: its type (the workflow function) and its id,
 * made of what it runs on (a node, a pool), so at most one of each kind runs there at a time.
 */
export const OPERATION_WORKFLOWS = {
  drain: { type: 'drain', workflowId: (nodeId: string) => `drain/${nodeId}` },
  decommission: { type: 'decommission', workflowId: (nodeId: string) => `decommission/${nodeId}` },
  purge: { type: 'purge', workflowId: (nodeId: string) => `purge/${nodeId}` },
  remediation: { type: 'remediation', workflowId: (nodeId: string) => `remediation/${nodeId}` },
  'pool-drain': { type: 'poolDrain', workflowId: (poolId: string) => `pool-drain/${poolId}` },
  maintenance: { type: 'maintenance', workflowId: (nodeId: string) => `maintenance/${nodeId}` },
  'pool-maintenance': {
    type: 'poolMaintenance',
    workflowId: (poolId: string) => `pool-maintenance/${poolId}`,
  },
} as const satisfies Record<OperationKind, { type: string; workflowId: (subjectId: string) => string }>;

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

/**
 * The signal every lifecycle workflow answers: its record changed, look at it again (a release, an
 * uncordon, a freed budget slot, the node's answer). Its argument says why, for the Temporal UI.
 */
export const WAKE_SIGNAL = 'wake';

export const drainWorkflowId = OPERATION_WORKFLOWS.drain.workflowId;
