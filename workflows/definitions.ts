import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { LivenessSettings } from '../domain/liveness';
import { OPERATION_WORKFLOWS, WAKE_SIGNAL } from '../domain/operation';
import type {
  DecommissionProgress,
  DrainProgress,
  OperationProgress,
  PoolDrainProgress,
  PurgeProgress,
  RemediationProgress,
  MaintenanceProgress,
  PoolMaintenanceProgress,
} from '../domain/progress';

// What the workflows, their activities, the dispatcher and the API share: workflow ids, inputs,
// the signal and the queries. It imports no other module of this project but domain/, so every
// side imports it and it imports none of them.

export { drainWorkflowId } from '../domain/operation';
export const decommissionWorkflowId = OPERATION_WORKFLOWS.decommission.workflowId;
export const purgeWorkflowId = OPERATION_WORKFLOWS.purge.workflowId;
export const remediationWorkflowId = OPERATION_WORKFLOWS.remediation.workflowId;
export const poolDrainWorkflowId = OPERATION_WORKFLOWS['pool-drain'].workflowId;
export const maintenanceWorkflowId = OPERATION_WORKFLOWS.maintenance.workflowId;
export const poolMaintenanceWorkflowId = OPERATION_WORKFLOWS['pool-maintenance'].workflowId;

/**
 * A lifecycle workflow's argument: the operation it runs, recorded `pending` by the request that
 * asked for it, and what it runs on. Everything else it reads from the operation's record.
 */
export interface NodeOperationInput {
  operationId: string;
  nodeId: string;
  /** Looks before continuing as new (tests make it small). */
  continueAsNewAfter?: number;
}

export interface PoolOperationInput {
  operationId: string;
  poolId: string;
  /** History length after which the run continues as new (tests make it small). */
  continueAsNewAfter?: number;
}

/**
 * Look at your record again: sent through the outbox by whatever changed it (db/outbox.ts). Its
 * argument says why (`allocation released`, `uncordoned`, …), shown in the Temporal UI.
 */
export const wakeSignal = defineSignal<[string]>(WAKE_SIGNAL);

/** Every lifecycle workflow answers `progress` with its operation's progress, as the record has it. */
export const progressQuery = defineQuery<OperationProgress>('progress');
export const drainProgressQuery = defineQuery<DrainProgress>('progress');
export const poolDrainProgressQuery = defineQuery<PoolDrainProgress>('progress');
export const purgeProgressQuery = defineQuery<PurgeProgress>('progress');
export const decommissionProgressQuery = defineQuery<DecommissionProgress>('progress');
export const remediationProgressQuery = defineQuery<RemediationProgress>('progress');
export const maintenanceProgressQuery = defineQuery<MaintenanceProgress>('progress');
export const poolMaintenanceProgressQuery = defineQuery<PoolMaintenanceProgress>('progress');

/**
 * How many times a purge looks at its command (about one a minute while the node is away) before
 * it continues as new: a purge that waits days for an offline node keeps each run's history a few
 * thousand events long, far from Temporal's limit.
 */
export const PURGE_CHECKS_PER_RUN = 500;

/**
 * How many node drains a pool drain requests in one activity: committed in shares of 25 nodes
 * (activities/pool-drain.ts), so the first start out of a wave does not wait for its last. 500,
 * not 100: a wave no longer waits for the pool drain's next workflow task, which queues behind
 * those of the node drains just started (bench pool-drain).
 */
export const POOL_DRAIN_WAVE = 500;

// ── liveness ─────────────────────────────────────────────────────────────────────────────────

export const LIVENESS_SWEEP_WORKFLOW_ID = 'liveness-sweep';

export interface LivenessSweepInput {
  settings: LivenessSettings;
  /** Sweeps before continuing as new (keeps the history small). */
  continueAsNewAfter?: number;
  /**
   * How long one sweep may run before it is retried elsewhere (default 30 s): a worker that died
   * mid-sweep holds the controller up this long. Crash tests shorten it.
   */
  sweepTimeoutMs?: number;
}

export interface LivenessProgress {
  sweeps: number;
  lastSweepAt: string | null;
  lastResult: { disconnected: number; unreachable: number; lost: number; graceUntil: string | null } | null;
  nextSweepAt: string | null;
  /** The last sweep that gave up (a refusal no retry fixes); the controller carries on. */
  lastFailure: { code: string; reason: string; at: string } | null;
}

export const livenessProgressQuery = defineQuery<LivenessProgress>('progress');
