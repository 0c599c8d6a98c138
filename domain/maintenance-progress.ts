// Where a node's maintenance stands, as its operation's record says it (domain/progress.ts): no
// import but types, so the workflows that answer `progress` can load it.

/** A maintenance's phases: the kind of step it is at, then how it ended. */
export const MAINTENANCE_PHASES = [
  'waiting-for-worker',
  'draining',
  'running',
  'rebooting',
  'verifying',
  'uncordoning',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type MaintenancePhase = (typeof MAINTENANCE_PHASES)[number];

/** How one step of a maintenance went. */
export interface StepRecord {
  /** The step, as `stepText` writes it. */
  step: string;
  /** null while it runs or before it began. */
  outcome: 'done' | 'failed' | 'cancelled' | null;
  startedAt: string | null;
  endedAt: string | null;
  /** The drain a `drain` step followed. */
  operationId?: string;
  /** The command a `run`, `reboot` or `verify` step ran (its output: `GET /v1/commands/{id}`). */
  commandId?: string;
  /** Why it failed. */
  reason?: string;
}

/** A probe (a condition) that is not healthy, as `verify` names it. */
export interface FailingProbe {
  type: string;
  reason: string | null;
  since: string;
}

export interface MaintenanceWaitingFor {
  /** The step it is at (0-based); `steps.length` once every step is done. */
  step: number;
  steps: StepRecord[];
  /** A `reboot` step: the boot id the node had when the reboot was asked. */
  bootIdBefore?: string | null;
  /** A `verify` step: since when every probe has been healthy (null: one is not). */
  healthySince?: string | null;
  /** A `verify` step: the probes that are not healthy. */
  failing?: FailingProbe[];
  /** When the current step gives up (a reboot's or a verify's timeout). */
  stepDeadline?: string | null;
  /** The rolling maintenance this node's maintenance belongs to, if any. */
  parentOperationId?: string | null;
}

/** A rolling maintenance's phases: `paused` once `maxFailures` node maintenances failed. */
export const POOL_MAINTENANCE_PHASES = [
  'waiting-for-worker',
  'maintaining',
  'paused',
  'succeeded',
  'failed',
  'cancelled',
] as const;

/** One node of a rolling maintenance: its maintenance, where it is, how it ended. */
export interface MaintainedNode {
  nodeId: string;
  hostname: string | null;
  /** Its maintenance (`GET /v1/operations/{id}`: its steps, the commands they ran). */
  operationId: string | null;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  /** The step it is at, or failed at (as the plan writes it); null before it began. */
  step: string | null;
  /** Why it failed (the failed step's reason, or the refusal of its request). */
  reason: string | null;
}

export interface PoolMaintenanceWaitingFor {
  counts: { pending: number; running: number; succeeded: number; failed: number; cancelled: number };
  /** How many nodes are at each step of the plan now (`atStep[i]`: running step i), and done with it. */
  atStep: number[];
  doneStep: number[];
  steps: string[];
  /** The nodes that run or ended (every one, up to `POOL_MAINTENANCE_LISTED`), oldest first. */
  nodes: MaintainedNode[];
  maxConcurrent: number;
  maxFailures: number;
  /** Failures that count toward `maxFailures`: those since the last resume. */
  failuresSinceResume: number;
  paused: boolean;
}

/** How many of a rolling maintenance's nodes its progress lists (the counts are exact). */
export const POOL_MAINTENANCE_LISTED = 200;
