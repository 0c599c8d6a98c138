import type { UpdateDefinition } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Budget } from '../domain/budget';
import type { Deadline } from '../domain/deadline';
import type { LivenessSettings } from '../domain/liveness';
import type { OperationKind } from '../domain/operation';
import type { AttemptRecord, Ladders, RemediationPlan } from '../domain/remediation';
import type { NodeView, OperationView } from '../activities';

/** What the API hands to a lifecycle workflow's `begin` update. */
export interface BeginRequest {
  actor: string;
  reason: string | null;
  version?: number;
  /** The caller the key belongs to (`idempotencyScope`); set exactly when the key is. */
  idempotencyScope: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  /** The id the operation gets if this begin creates one (see `beginOperationId`). */
  operationId?: string;
}

/**
 * What a begin activity gets: the request, the node and workflow, and the id of the operation it
 * creates. A begin run again (a local activity in a failed workflow task, an update re-sent into a
 * new run) finds its own operation by that id and answers it again instead of refusing its own effect.
 */
export type BeginInput<R extends BeginRequest = BeginRequest> = R & {
  nodeId: string;
  workflowId: string;
  operationId: string;
};

/** The `begin` answer: the operation the request maps to, and whether this request created it. */
export interface OperationBegun {
  operation: OperationView;
  created: boolean;
}

/** A node operation's `begin` answer: also the node as the begin left it. */
export interface BeginResult extends OperationBegun {
  node: NodeView;
}

/** The lifecycle operations that run as a workflow of their own, one per node at a time. */
export type LifecycleKind = 'drain' | 'decommission' | 'purge' | 'remediation';

/**
 * A workflow as the API starts it: `kind` is its workflow type (the exported workflow function of
 * that name) and its operations' kind; `workflowId` is made of the id of what it runs on (a node,
 * a pool); `begin` types the request and the answer.
 */
export interface OperationWorkflow<
  Input extends object,
  Request extends BeginRequest,
  Result extends OperationBegun,
> {
  kind: OperationKind;
  /** The workflow type when it is not `kind` (a kind such as `pool-drain` is no function name). */
  type?: string;
  workflowId: (subjectId: string) => string;
  begin: UpdateDefinition<Result, [Request]>;
  /** Never set: it carries the type of the workflow's argument. */
  readonly input?: Input;
}

/** A lifecycle workflow: one per node at a time, started on the node. */
export interface LifecycleWorkflow<
  Input extends { nodeId: string },
  Request extends BeginRequest,
  Result extends BeginResult,
> extends OperationWorkflow<Input, Request, Result> {
  kind: LifecycleKind;
}

/** A workflow started on a pool: one per pool at a time. */
export interface PoolWorkflow<
  Input extends { poolId: string },
  Request extends BeginRequest,
  Result extends OperationBegun,
> extends OperationWorkflow<Input, Request, Result> {
  kind: 'pool-drain';
}
/** Every workflow answers `progress`; each family types its own answer. */
export const progressQuery = defineQuery<DrainProgress>('progress');

// ── drain ────────────────────────────────────────────────────────────────────────────────────

export const drainWorkflowId = (nodeId: string) => `drain/${nodeId}`;

/** A drain's begin: `deadline` (RFC 3339, resolved by the API) is when live allocations are force-released. */
export interface DrainRequest extends BeginRequest {
  deadline: string | null;
}

export interface DrainInput {
  nodeId: string;
  /**
   * Set when the drain has begun and owns this operation: the workflow continued as new, or a pool
   * drain began it and started this workflow as its child.
   */
  resume?: { operationId: string; startedAt: string; deadline: string | null };
  /** Loop iterations before continuing as new (tests make it small). */
  continueAsNewAfter?: number;
}

/** `already-done`: every begin of the run was answered by a drain that had already finished. */
export type DrainOutcome =
  'drained' | 'cancelled' | 'failed' | 'refused' | 'never-began' | 'finished' | 'already-done';

export interface DrainProgress {
  /** `waiting-for-budget`: past the deadline, the pool's disruption budget has no slot (`budget`). */
  phase: 'starting' | 'waiting' | 'waiting-for-budget' | 'drained' | 'cancelled' | 'failed';
  liveAllocationCount: number;
  liveAllocations: { id: string; endsAt: string | null }[];
  earliestEndsAt: string | null;
  nextCheckAt: string | null;
  startedAt: string | null;
  deadline: string | null;
  /** While `waiting-for-budget`: the pool's budget as the last forced release found it. */
  budget: Budget | null;
}

/** Sent by the release path so a drain wakes at once instead of on its next timer. */
export const allocationReleasedSignal = defineSignal<[{ allocationId: string }]>('allocationReleased');
/** Sent by uncordon so a drain notices at once that it was ended. */
export const drainCancelledSignal = defineSignal('cancel');
/** Sent to a pool's waiting drains when a node of the pool gives back its disruption-budget slot. */
export const budgetFreedSignal = defineSignal('budgetFreed');

export const beginDrainUpdate = defineUpdate<BeginResult, [DrainRequest]>('begin');

export const drainWorkflow: LifecycleWorkflow<DrainInput, DrainRequest, BeginResult> = {
  kind: 'drain',
  workflowId: drainWorkflowId,
  begin: beginDrainUpdate,
};

/** The longest a drain sleeps between looks at its node (docs/lifecycle/drain.md). */
export const DRAIN_MAX_SLEEP_MS = 5 * 60_000;

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

// ── decommission ─────────────────────────────────────────────────────────────────────────────

export const decommissionWorkflowId = (nodeId: string) => `decommission/${nodeId}`;

/** What execute presents: the preview's generation and digest, a confirmation, owner and reason. */
export interface DecommissionRequest extends BeginRequest {
  confirm: string;
  nodeGeneration: number;
  dependencyDigest: string;
  operator: string;
}

export const beginDecommissionUpdate = defineUpdate<BeginResult, [DecommissionRequest]>('begin');

export const decommissionWorkflow: LifecycleWorkflow<{ nodeId: string }, DecommissionRequest, BeginResult> = {
  kind: 'decommission',
  workflowId: decommissionWorkflowId,
  begin: beginDecommissionUpdate,
};

export const DECOMMISSION_STEPS = [
  'revokeNodeIdentity',
  'decommissionAccelerators',
  'protectStorageRoots',
  'removeCurrentRows',
  'finalizeDecommission',
] as const;

export interface DecommissionProgress {
  phase: 'starting' | 'cleaning-up' | 'decommissioned' | 'refused' | 'failed';
  step: (typeof DECOMMISSION_STEPS)[number] | null;
  stepsDone: string[];
}

export const decommissionProgressQuery = defineQuery<DecommissionProgress>('progress');

// ── purge ────────────────────────────────────────────────────────────────────────────────────

export const purgeWorkflowId = (nodeId: string) => `purge/${nodeId}`;

/**
 * A purge's begin: `force` releases the node's open allocations in the begin's transaction;
 * without it (absent in begins recorded before it existed) a node that holds any is refused.
 */
export interface PurgeRequest extends BeginRequest {
  force?: boolean;
}

export interface PurgeInput {
  nodeId: string;
  /** Set when the purge continued as new: its operation, and since when it waits for the node. */
  resume?: { operationId: string; waitingSince: string };
  /** Looks at the command before continuing as new (production: `PURGE_CHECKS_PER_RUN`; tests make it small). */
  continueAsNewAfter?: number;
}

export const beginPurgeUpdate = defineUpdate<BeginResult, [PurgeRequest]>('begin');

export const purgeWorkflow: LifecycleWorkflow<PurgeInput, PurgeRequest, BeginResult> = {
  kind: 'purge',
  workflowId: purgeWorkflowId,
  begin: beginPurgeUpdate,
};

/**
 * How many times a purge looks at its command (about one a minute while the node is away) before
 * it continues as new: a purge that waits days for an offline node keeps each run's history a few
 * thousand events long, far from Temporal's limit.
 */
export const PURGE_CHECKS_PER_RUN = 500;

export type PurgeCheck =
  | { state: 'deleted' }
  | { state: 'waiting' | 'acked' | 'refused'; commandId: string | null; refuseReason: string | null };

export interface PurgeProgress {
  phase: 'starting' | 'waiting-for-node' | 'refused' | 'purged' | 'cancelled' | 'failed';
  commandId: string | null;
  refusedReason: string | null;
  waitingSince: string | null;
}

export const purgeProgressQuery = defineQuery<PurgeProgress>('progress');
/** Sent by the ack and refuse routes, and by DELETE, so the purge looks again at once. */
export const purgeAnsweredSignal = defineSignal('commandAnswered');

// ── remediation ──────────────────────────────────────────────────────────────────────────────

export const remediationWorkflowId = (nodeId: string) => `remediation/${nodeId}`;

export interface RemediationRequest extends BeginRequest {
  condition: string;
  /** Automatic remediations (an agent's report) are held back in a storm; an operator's are not. */
  automatic: boolean;
  /**
   * The workflow's own begin of the next queued condition, after the previous remediation ended:
   * the begin takes the oldest true condition no remediation has handled (`condition` is the one
   * the previous run saw), automatic unless an operator reported it — or joins the operation a
   * begin recorded as the previous run ended.
   */
  queued?: boolean;
}

/** Ladders and attempt timeout of the deployment, read only from histories recorded before plans. */
export interface RemediationSettings {
  ladders?: Ladders;
  attemptTimeoutMs?: number;
}

export interface RemediationInput {
  nodeId: string;
  /** Recorded histories carry it; a begin's `plan` (from the pool policy) decides now. */
  settings?: RemediationSettings;
  /** Set when the previous run continued as new for a queued condition: this run begins it itself. */
  queued?: { condition: string; after: string };
}

export interface RemediationBegun extends BeginResult {
  /** Set when storm protection escalated at once: no command is sent and the workflow ends. */
  escalated: boolean;
  condition: string;
  /** Resolved from the pool policy when the operation began (absent in histories recorded before). */
  plan?: RemediationPlan;
  /** The node's other true conditions no remediation has handled: remediated after this one. */
  queued?: string[];
}

/**
 * What a remediation's last step answers: the node's other true conditions waiting for a
 * remediation of their own, oldest first (the next remediation begins with the first).
 */
export interface RemediationEnded {
  queued: string[];
}

export const beginRemediationUpdate = defineUpdate<RemediationBegun, [RemediationRequest]>('begin');

export const remediationWorkflow: LifecycleWorkflow<RemediationInput, RemediationRequest, RemediationBegun> =
  {
    kind: 'remediation',
    workflowId: remediationWorkflowId,
    begin: beginRemediationUpdate,
  };

export interface RemediationProgress {
  phase: 'starting' | 'attempting' | 'succeeded' | 'escalated' | 'cancelled';
  condition: string | null;
  attempt: number;
  action: string | null;
  attemptDeadline: string | null;
  attempts: AttemptRecord[];
  /** The ladder this remediation climbs. */
  ladder: string[];
  /** Other true conditions of the node, remediated after this one (oldest first). */
  queued: string[];
}

export const remediationProgressQuery = defineQuery<RemediationProgress>('progress');
/** Sent when the condition clears, and when the node answers a remediation command. */
export const remediationWakeSignal = defineSignal('remediationChanged');

export interface AttemptCheck {
  cleared: boolean;
  command: 'pending' | 'acked' | 'refused' | 'cancelled';
  refuseReason: string | null;
  deleted: boolean;
}

// ── pool drain ───────────────────────────────────────────────────────────────────────────────

export const poolDrainWorkflowId = (poolId: string) => `pool-drain/${poolId}`;

/**
 * When a node's drain starts force-releasing (docs/lifecycle/drain.md): one time for every node,
 * or a grace that counts from each node's own drain start.
 */
export type PoolDrainDeadline = Deadline;

/** A pool drain's begin: which nodes (label selector; `{}` is all of them), how many at a time. */
export interface PoolDrainRequest extends BeginRequest {
  selector: Record<string, string>;
  maxConcurrent: number;
  deadline: PoolDrainDeadline | null;
}

/** What a pool begin activity gets: the request, the pool and workflow, and the operation's id. */
export type PoolBeginInput<R extends BeginRequest = BeginRequest> = R & {
  poolId: string;
  workflowId: string;
  operationId: string;
};

/** The pool drain's `begin` answer; `nodeIds` are the nodes it selected (in the record's result too). */
export interface PoolDrainBegun extends OperationBegun {
  nodeIds: string[];
}

export const beginPoolDrainUpdate = defineUpdate<PoolDrainBegun, [PoolDrainRequest]>('begin');

/** A node of a pool drain whose drain ended otherwise than drained (or never began). */
export interface FailedNode {
  nodeId: string;
  /** The node's drain operation; null when its begin was refused. */
  operationId: string | null;
  code: string;
  message: string;
}

/** A node drain the pool drain runs: its child `drain/<nodeId>`, or a drain that already ran (joined). */
export interface ActiveNode {
  nodeId: string;
  operationId: string;
  /** Whether the pool drain started it as its child (else it joined a drain already running). */
  child: boolean;
}

/** What a pool drain carries into its next run when it continues as new. */
export interface PoolDrainState {
  operationId: string;
  startedAt: string;
  actor: string;
  reason: string | null;
  maxConcurrent: number;
  deadline: PoolDrainDeadline | null;
  pending: string[];
  active: ActiveNode[];
  drained: string[];
  failed: FailedNode[];
  /** Child reports that arrived but were not looked at yet. */
  reports: NodeDrainReport[];
}

export interface PoolDrainInput {
  poolId: string;
  resume?: PoolDrainState;
  /** History length after which the run continues as new (tests make it small). */
  continueAsNewAfter?: number;
  /** How often the pool drain reads its node drains' records (default 10 s). */
  pollIntervalMs?: number;
}

export type PoolDrainOutcome =
  'succeeded' | 'failed' | 'cancelled' | 'refused' | 'never-began' | 'already-done';

export interface PoolDrainCounts {
  pending: number;
  draining: number;
  waitingForBudget: number;
  drained: number;
  failed: number;
}

export interface PoolDrainProgress {
  phase: 'starting' | 'draining' | 'cancelling' | 'succeeded' | 'failed' | 'cancelled';
  counts: PoolDrainCounts;
  /** Node ids by state, each list at most POOL_DRAIN_LISTED long (the counts are exact). */
  nodes: {
    pending: string[];
    draining: string[];
    waitingForBudget: string[];
    drained: string[];
    failed: FailedNode[];
  };
  maxConcurrent: number;
  deadline: PoolDrainDeadline | null;
  startedAt: string | null;
}

/** How many node ids `progress` lists per state. */
/**
 * How many node drains a pool drain begins in one activity (each its own transaction) and then
 * starts side by side. 100 rather than 50: fewer activity and workflow-task round trips per node
 * (bench pool-drain: 0.53–0.65× of the empty-child start rate at 50, 0.60–0.89× at 100).
 */
export const POOL_DRAIN_WAVE = 100;

export const POOL_DRAIN_LISTED = 20;

export const poolDrainProgressQuery = defineQuery<PoolDrainProgress>('progress');

/** What a child drain tells its pool drain when it ends (`workflowInfo().parent`). */
export interface NodeDrainReport {
  nodeId: string;
  operationId: string;
  outcome: DrainOutcome;
}

export const nodeDrainEndedSignal = defineSignal<[NodeDrainReport]>('nodeDrainEnded');

export const poolDrainWorkflow: PoolWorkflow<PoolDrainInput, PoolDrainRequest, PoolDrainBegun> = {
  kind: 'pool-drain',
  type: 'poolDrain',
  workflowId: poolDrainWorkflowId,
  begin: beginPoolDrainUpdate,
};
