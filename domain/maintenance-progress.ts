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
