import { assertNever } from './assert-never';
import type { Budget } from './budget';
import type { Deadline } from './deadline';
import {
  MAINTENANCE_PHASES,
  POOL_MAINTENANCE_PHASES,
  type MaintenanceWaitingFor,
  type PoolMaintenanceWaitingFor,
} from './maintenance-progress';
import type { Ending } from './observed';
import type { OperationKind } from './operation';
import type { PoolDrainNodeTimeline } from './pool-drain-timeline';
import type { AttemptRecord } from './remediation';

// What an operation is doing, as its record says it (`GET /v1/operations/{id}`) and its workflow's
// `progress` query answers it: one structure per kind, written by the activities in the same
// transaction as the change they make (docs/architecture.md, "the operation row is the record").

/** Each kind's phases. `waiting-for-worker`: recorded (pending), no worker has begun it yet. */
export const PROGRESS_PHASES = {
  drain: ['waiting-for-worker', 'waiting', 'waiting-for-budget', 'drained', 'cancelled', 'failed'],
  'pool-drain': ['waiting-for-worker', 'draining', 'succeeded', 'failed', 'cancelled'],
  purge: ['waiting-for-worker', 'waiting-for-node', 'refused', 'purged', 'cancelled', 'failed'],
  decommission: ['waiting-for-worker', 'cleaning-up', 'decommissioned', 'cancelled', 'failed'],
  remediation: ['waiting-for-worker', 'attempting', 'succeeded', 'escalated', 'cancelled'],
  maintenance: MAINTENANCE_PHASES,
  'pool-maintenance': POOL_MAINTENANCE_PHASES,
} as const satisfies Record<OperationKind, readonly string[]>;

export type PhaseOf<K extends OperationKind> = (typeof PROGRESS_PHASES)[K][number];
export type Phase = PhaseOf<OperationKind>;

/** The phase of an operation just recorded, before a worker begins it. */
export const PENDING_PHASE = 'waiting-for-worker';

/**
 * A live allocation a drain waits for. Work a scheduler placed says which (`source`,
 * `externalId`), when the drain asked its scheduler to end it, and what the scheduler answered;
 * all four are null for one placed through Drydock.
 */
export interface DrainItem {
  id: string;
  endsAt: string | null;
  source: string | null;
  externalId: string | null;
  endRequestedAt: string | null;
  ending: Ending | null;
}

/** What a drain waits for: its live allocations (the count exact, at most 20 listed), the budget. */
export interface DrainWaitingFor {
  allocations: number;
  items: DrainItem[];
  earliestEndsAt: string | null;
  /** Past the deadline with no slot: the pool's disruption budget and who holds it. */
  budget: Budget | null;
}

export interface PoolDrainCounts {
  pending: number;
  draining: number;
  waitingForBudget: number;
  drained: number;
  failed: number;
}

/** A node of a pool drain whose drain ended otherwise than drained (or never began). */
export interface FailedNode {
  nodeId: string;
  /** The node's drain operation; null when its request was refused. */
  operationId: string | null;
  code: string;
  message: string;
}

/** A node that holds a slot of its pool's disruption budget. */
export interface BudgetHolder {
  nodeId: string;
  hostname: string;
  /** Its drain is still ending its work (a slot is held from the forced release on); else drained. */
  draining: boolean;
}

/**
 * The pool's disruption budget while some of a pool drain's nodes wait for it: at most `max` of
 * its nodes out at once, `used` now (exact), the holders (longest out first, at most
 * `POOL_DRAIN_LISTED`) — drained nodes still cordoned, of this pool drain or any other drain.
 */
export interface PoolDrainBudget {
  max: number;
  used: number;
  holders: BudgetHolder[];
  /** This pool drain's nodes that wait for a slot, by hostname (at most `POOL_DRAIN_LISTED`). */
  waiting: { nodeId: string; hostname: string }[];
}

/** Where a pool drain's nodes stand: exact counts, at most `POOL_DRAIN_LISTED` ids per state. */
export interface PoolDrainWaitingFor {
  counts: PoolDrainCounts;
  nodes: {
    pending: string[];
    draining: string[];
    waitingForBudget: string[];
    drained: string[];
    failed: FailedNode[];
  };
  maxConcurrent: number;
  /** A grace counted from each node's own drain start (`2h`), when the deadline is one. */
  graceAfterStart: string | null;
  /** While some of its nodes wait for the pool's disruption budget: the budget and who holds it. */
  budget: PoolDrainBudget | null;
  /** The first `POOL_DRAIN_TIMELINE` nodes of its selection over time, one row a node. */
  timeline: PoolDrainNodeTimeline[];
}

/** How many node ids a pool drain's progress lists per state. */
export const POOL_DRAIN_LISTED = 20;

export interface PurgeWaitingFor {
  commandId: string | null;
  refusedReason: string | null;
}

/** The decommission's steps, in order; the first is its point of no return. */
export const DECOMMISSION_STEPS = [
  'revokeNodeIdentity',
  'decommissionAccelerators',
  'protectStorageRoots',
  'removeCurrentRows',
  'finalizeDecommission',
] as const;
export type DecommissionStep = (typeof DECOMMISSION_STEPS)[number];

export interface DecommissionWaitingFor {
  step: DecommissionStep | null;
  stepsDone: DecommissionStep[];
}

export interface RemediationWaitingFor {
  condition: string;
  attempt: number;
  action: string | null;
  attemptDeadline: string | null;
  attempts: AttemptRecord[];
  ladder: string[];
  /** The node's other true conditions, remediated after this one (oldest first). */
  queued: string[];
}

interface ProgressOf<K extends OperationKind, W> {
  kind: K;
  phase: PhaseOf<K>;
  /** When a worker began it (null while it waits for one). */
  startedAt: string | null;
  /** When what is still live is released by force (drains), if ever. */
  deadline: string | null;
  /** When its workflow looks again at the latest, without a wake-up. */
  nextCheckAt: string | null;
  /** What it waits for (once it ended, what it last waited for); null before it began. */
  waitingFor: W | null;
}

export type DrainProgress = ProgressOf<'drain', DrainWaitingFor>;
export type PoolDrainProgress = ProgressOf<'pool-drain', PoolDrainWaitingFor>;
export type PurgeProgress = ProgressOf<'purge', PurgeWaitingFor>;
export type DecommissionProgress = ProgressOf<'decommission', DecommissionWaitingFor>;
export type RemediationProgress = ProgressOf<'remediation', RemediationWaitingFor>;
export type MaintenanceProgress = ProgressOf<'maintenance', MaintenanceWaitingFor>;
export type PoolMaintenanceProgress = ProgressOf<'pool-maintenance', PoolMaintenanceWaitingFor>;

export type OperationProgress =
  | DrainProgress
  | PoolDrainProgress
  | PurgeProgress
  | DecommissionProgress
  | RemediationProgress
  | MaintenanceProgress
  | PoolMaintenanceProgress;

/** The `waitingFor` of each kind, by kind. */
export type WaitingForOf<K extends OperationKind> = Extract<OperationProgress, { kind: K }>['waitingFor'];

/** The shortest and longest a drain sleeps between looks at its node without a wake-up. */
export const DRAIN_MIN_SLEEP_MS = 250;
export const DRAIN_MAX_SLEEP_MS = 5 * 60_000;

/**
 * When a drain looks next without a wake-up: at the earliest end of its live allocations or its
 * deadline, within `DRAIN_MIN_SLEEP_MS`..`DRAIN_MAX_SLEEP_MS` of `now`. A deadline at or before
 * `now` (the time the look compared it with) is no reason to look again: that look acted on it —
 * it waits for budget, where only a freed slot or an end helps, or what is left is work a
 * scheduler was asked to end, whose release or answer wakes the drain.
 */
export function nextDrainCheck(now: number, earliestEndsAt: string | null, deadline: string | null): string {
  const endsAt = earliestEndsAt ? Date.parse(earliestEndsAt) : Infinity;
  const deadlineAt = deadline && Date.parse(deadline) > now ? Date.parse(deadline) : Infinity;
  const sleep = Math.min(
    Math.max(DRAIN_MIN_SLEEP_MS, Math.min(endsAt, deadlineAt) - now),
    DRAIN_MAX_SLEEP_MS,
  );
  return new Date(now + sleep).toISOString();
}

/** A pool drain's deadline as its record keeps it: the time, or the grace after each start. */
export function poolDrainDeadline(deadline: Deadline | null): {
  deadline: string | null;
  graceAfterStart: string | null;
} {
  if (!deadline) return { deadline: null, graceAfterStart: null };
  return 'at' in deadline
    ? { deadline: deadline.at, graceAfterStart: null }
    : { deadline: null, graceAfterStart: deadline.after };
}

// ── in words ────────────────────────────────────────────────────────────────────────────────────
// One sentence per operation, for the console, the CLI and the Temporal UI's current details.

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
/** `12:05Z`, or `Dec 4 12:05Z` when it is not within a day of now. */
function clock(iso: string, now: number): string {
  const at = Date.parse(iso);
  const hhmm = `${new Date(at).toISOString().slice(11, 16)}Z`;
  if (Math.abs(at - now) < 20 * 3_600_000) return hhmm;
  const day = new Date(at).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  return `${day} ${hhmm}`;
}

/** What the operation is doing, in one sentence (its record's progress, or its workflow's). */
export function progressInWords(p: OperationProgress, now: number = Date.now()): string {
  if (p.phase === PENDING_PHASE) {
    return 'Waiting for a worker: the request is recorded and starts as soon as a worker takes it.';
  }
  switch (p.kind) {
    case 'drain':
      return drainInWords(p, now);
    case 'pool-drain':
      return poolDrainInWords(p, now);
    case 'purge':
      return purgeInWords(p, now);
    case 'decommission':
      return decommissionInWords(p);
    case 'remediation':
      return remediationInWords(p, now);
    case 'maintenance':
      return maintenanceInWords(p, now);
    case 'pool-maintenance':
      return poolMaintenanceInWords(p);
    default:
      return assertNever(p);
  }
}

function drainInWords(p: DrainProgress, now: number): string {
  const w = p.waitingFor;
  const next = p.nextCheckAt ? ` Next look ${clock(p.nextCheckAt, now)}.` : '';
  switch (p.phase) {
    case 'waiting': {
      const asked = w ? askedInWords(w) : null;
      if (asked) return `${asked}${next}`;
      const live = plural(w?.allocations ?? 0, 'live allocation');
      const ends = w?.earliestEndsAt ? ` (the first ends ${clock(w.earliestEndsAt, now)})` : '';
      const left = w?.items.some((i) => i.source)
        ? "what Drydock placed is released by force within the pool's disruption budget and the schedulers are asked to end the rest"
        : "what is left is released by force within the pool's disruption budget";
      const then = p.deadline ? ` until ${clock(p.deadline, now)}, then ${left}` : ' to end; no deadline';
      const polite = w ? politelyAskedInWords(w) : null;
      return `Waiting for ${live}${ends}${then}${polite ? `; ${polite}` : ''}.${next}`;
    }
    case 'waiting-for-budget': {
      const b = w?.budget;
      const budget = b
        ? ` (${b.used} of ${b.max} nodes out${b.holders.length ? `: ${b.holders.join(', ')}` : ''})`
        : '';
      return (
        `Past its deadline with ${plural(w?.allocations ?? 0, 'live allocation')}: waiting for a slot in the ` +
        `pool's disruption budget${budget} to release them by force.${next}`
      );
    }
    case 'drained':
      return 'Drained: the node holds nothing live.';
    case 'cancelled':
      return 'Cancelled.';
    case 'failed':
      return 'Failed.';
    case PENDING_PHASE:
      return '';
  }
}

/** How much of a scheduler's answer the words quote; a longer one is cut, with `…`. */
const QUOTED_ANSWER = 60;

/**
 * Past its deadline, the work a drain asked schedulers to end, by scheduler, each with its answer
 * (`asked slurm:hpc1 to end 2: 4711 (requeue: requeued), 4712 (no answer yet)`), and how many
 * other allocations are live; null when it asked none.
 */
function askedInWords(w: DrainWaitingFor): string | null {
  const asked = w.items.filter((item) => item.endRequestedAt && item.source);
  if (asked.length === 0) return null;
  const parts = askedOfEachInWords(asked, () => 'end');
  const others = w.allocations - asked.length;
  if (others > 0) parts.push(plural(others, 'more live allocation'));
  return `Past its deadline: ${parts.join('; ')}.`;
}

/**
 * Before its deadline, the live work a scheduler was asked to end politely and answered (an
 * `ending` with no `endRequestedAt`: a Kubernetes eviction), by scheduler
 * (`asked kubernetes:k1 to evict 1: default/web-1/uid (evict: refused: …)`); null when none.
 */
function politelyAskedInWords(w: DrainWaitingFor): string | null {
  const asked = w.items.filter((item) => item.ending && item.source && !item.endRequestedAt);
  if (asked.length === 0) return null;
  const verb = (items: DrainItem[]) => {
    const actions = new Set(items.map((item) => item.ending!.action));
    return actions.size === 1 ? [...actions][0]! : 'end';
  };
  return askedOfEachInWords(asked, verb).join('; ');
}

/** One `asked <source> to <verb> <count>: <each with its answer>` per scheduler, in order met. */
function askedOfEachInWords(asked: DrainItem[], verb: (items: DrainItem[]) => string): string[] {
  const bySource = new Map<string, DrainItem[]>();
  for (const item of asked) bySource.set(item.source!, [...(bySource.get(item.source!) ?? []), item]);
  return [...bySource].map(
    ([source, items]) =>
      `asked ${source} to ${verb(items)} ${items.length}: ${items.map(endingInWords).join(', ')}`,
  );
}

function endingInWords(item: DrainItem): string {
  if (!item.ending) return `${item.externalId} (no answer yet)`;
  const { action, answer } = item.ending;
  const characters = [...answer];
  const quoted =
    characters.length > QUOTED_ANSWER ? `${characters.slice(0, QUOTED_ANSWER - 1).join('')}…` : answer;
  return `${item.externalId} (${action}: ${quoted})`;
}

function poolDrainInWords(p: PoolDrainProgress, now: number): string {
  const w = p.waitingFor;
  const c = w?.counts;
  const counts = c
    ? `${c.drained} drained, ${c.draining + c.waitingForBudget} draining` +
      `${c.waitingForBudget > 0 ? ` (${c.waitingForBudget} waiting for the budget)` : ''}, ` +
      `${c.pending} pending, ${c.failed} failed`
    : '';
  const deadline = p.deadline
    ? `deadline ${clock(p.deadline, now)}`
    : w?.graceAfterStart
      ? `deadline ${w.graceAfterStart} after each node's drain starts`
      : 'no deadline';
  const at = w ? `; at most ${w.maxConcurrent} at a time; ${deadline}` : '';
  switch (p.phase) {
    case 'draining': {
      const budget =
        w && w.counts.waitingForBudget > 0 && w.budget ? ` ${budgetWaitInWords(w, w.budget)}` : '';
      return `Draining: ${counts}${at}.${budget}`;
    }
    case 'succeeded':
      return `Succeeded: ${counts}.`;
    case 'failed':
      return `Failed: ${counts}.`;
    case 'cancelled':
      return c ? `Cancelled: ${counts}.` : 'Cancelled.';
    case PENDING_PHASE:
      return '';
  }
}

/**
 * Which of a pool drain's nodes wait for the pool's disruption budget (by hostname), who holds it,
 * and the ways out: a full budget frees only when a holder comes back (an uncordon), as a drained
 * node keeps its slot while it stays cordoned; or a larger budget; or no pool drain.
 */
function budgetWaitInWords(w: PoolDrainWaitingFor, b: PoolDrainBudget): string {
  // A record written before the budget named its waiting nodes says their ids.
  const hostnames = new Map((b.waiting ?? []).map((x) => [x.nodeId, x.hostname]));
  const waiting = listed(
    w.nodes.waitingForBudget.map((id) => hostnames.get(id) ?? id),
    w.counts.waitingForBudget,
  );
  const head = `${waiting} ${w.counts.waitingForBudget === 1 ? 'waits' : 'wait'} for a slot in the pool's disruption budget`;
  if (b.max === 0) {
    return `${head}, which lets no node out (maxUnavailable 0): raise it to let them go, or cancel the pool drain.`;
  }
  const out = `${b.used} of ${b.max} nodes out`;
  if (b.used < b.max) return `${head}: ${out}, so a slot is free and the next look takes it.`;
  const holders = listed(
    b.holders.map((x) => `${x.hostname} (${x.draining ? 'still draining' : 'drained, still cordoned'})`),
    b.used,
  );
  return (
    `${head}: ${out}, held by ${holders}. To let the next go: uncordon ${b.used === 1 ? 'it' : 'one of them'} ` +
    `(or run a rolling maintenance, which puts each node back), raise the pool's maxUnavailable (at most ${b.max} out now), ` +
    'or cancel the pool drain.'
  );
}

/** `a, b and 3 more`: the listed items, and how many of `total` are not listed. */
function listed(items: string[], total: number): string {
  const more = total - items.length;
  return more > 0 ? `${items.join(', ')} and ${more} more` : items.join(', ');
}

function purgeInWords(p: PurgeProgress, now: number): string {
  const command = p.waitingFor?.commandId ? ` (command ${p.waitingFor.commandId})` : '';
  switch (p.phase) {
    case 'waiting-for-node':
      return (
        `Waiting for the node to take the purge command${command}` +
        `${p.startedAt ? ` since ${clock(p.startedAt, now)}` : ''}: it is delivered when the node polls.`
      );
    case 'refused':
      return (
        `The node refused the purge command${command}: ${p.waitingFor?.refusedReason ?? 'no reason given'}. ` +
        'It stays purging until it is purged again or deleted.'
      );
    case 'purged':
      return 'Purged: the node acknowledged the command and was forgotten.';
    case 'cancelled':
      return 'Cancelled.';
    case 'failed':
      return 'Failed.';
    case PENDING_PHASE:
      return '';
  }
}

const STEP_WORDS: Record<DecommissionStep, string> = {
  revokeNodeIdentity: 'revoking the node identity',
  decommissionAccelerators: 'decommissioning accelerators',
  protectStorageRoots: 'protecting storage roots',
  removeCurrentRows: 'removing current rows',
  finalizeDecommission: 'finalizing',
};

function decommissionInWords(p: DecommissionProgress): string {
  const done = `${p.waitingFor?.stepsDone.length ?? 0} of ${DECOMMISSION_STEPS.length} steps done`;
  const step = p.waitingFor?.step;
  switch (p.phase) {
    case 'cleaning-up':
      return `Cleaning up: ${step ? STEP_WORDS[step] : 'between steps'}; ${done}.`;
    case 'decommissioned':
      return 'Decommissioned: every step done.';
    case 'cancelled':
      return 'Cancelled before its point of no return: the node is as it was.';
    case 'failed':
      return 'Failed.';
    case PENDING_PHASE:
      return '';
  }
}

function remediationInWords(p: RemediationProgress, now: number): string {
  const w = p.waitingFor;
  if (!w) return p.phase.charAt(0).toUpperCase() + p.phase.slice(1) + '.';
  const queued = w.queued.length ? ` Queued after it: ${w.queued.join(', ')}.` : '';
  const ladder = w.ladder.length ? ` (ladder ${w.ladder.join(' → ')})` : '';
  switch (p.phase) {
    case 'attempting':
      return (
        `Remediating ${w.condition}: attempt ${w.attempt} of at most ${w.ladder.length}${ladder}, ` +
        `${w.action ?? 'no action'}; waiting for ${w.condition} to clear` +
        `${w.attemptDeadline ? ` until ${clock(w.attemptDeadline, now)}` : ''}.${queued}`
      );
    case 'succeeded':
      return `Succeeded: ${w.condition} cleared after ${plural(w.attempts.length, 'attempt')}.${queued}`;
    case 'escalated':
      return `Escalated to maintenance: ${w.condition} did not clear after ${plural(w.attempts.length, 'attempt')}${ladder}.${queued}`;
    case 'cancelled':
      return `Cancelled: escalated to maintenance.${queued}`;
    case PENDING_PHASE:
      return '';
  }
}

/** The phase an operation of `kind` ends in with `status`. */
export function finalPhase(kind: OperationKind, status: 'succeeded' | 'failed' | 'cancelled'): Phase {
  if (status === 'cancelled') return 'cancelled';
  switch (kind) {
    case 'drain':
      return status === 'succeeded' ? 'drained' : 'failed';
    case 'purge':
      return status === 'succeeded' ? 'purged' : 'failed';
    case 'decommission':
      return status === 'succeeded' ? 'decommissioned' : 'failed';
    case 'remediation':
      return status === 'succeeded' ? 'succeeded' : 'escalated';
    case 'pool-drain':
    case 'maintenance':
    case 'pool-maintenance':
      return status;
    default:
      return assertNever(kind);
  }
}

/**
 * A maintenance in words: which step of how many, and what it waits for — "Step 3 of 5 (reboot):
 * rebooted 2 min ago, waiting for the node to come back (boot id still 1b2c…); gives up 14:05Z."
 */
function maintenanceInWords(p: MaintenanceProgress, now: number): string {
  const w = p.waitingFor;
  if (!w) return '';
  const done = w.steps.filter((s) => s.outcome === 'done').length;
  switch (p.phase) {
    case 'succeeded':
      return `Succeeded: ${plural(done, 'step')} done (${w.steps.map((s) => s.step).join(', ')}).`;
    case 'failed': {
      const failed = w.steps.find((s) => s.outcome === 'failed');
      return failed
        ? `Failed at step ${w.steps.indexOf(failed) + 1} (${failed.step}): ${failed.reason ?? 'no reason'}. The node is in maintenance.`
        : 'Failed.';
    }
    case 'cancelled':
      return `Cancelled at step ${Math.min(w.step + 1, w.steps.length)} of ${w.steps.length}; the node stays cordoned.`;
    case PENDING_PHASE:
      return '';
    default: {
      const current = w.steps[w.step];
      if (!current) return '';
      const until = w.stepDeadline ? `; gives up ${clock(w.stepDeadline, now)}` : '';
      return `Step ${w.step + 1} of ${w.steps.length} (${current.step}): ${stepWaitInWords(p.phase, w, now)}${until}.`;
    }
  }
}

/** What the current step of a maintenance waits for. */
function stepWaitInWords(phase: MaintenanceProgress['phase'], w: MaintenanceWaitingFor, now: number): string {
  const current = w.steps[w.step]!;
  const since = current.startedAt ? ` (since ${clock(current.startedAt, now)})` : '';
  switch (phase) {
    case 'draining':
      return `waiting for drain ${current.operationId ?? '…'} to end${since}`;
    case 'running':
      return `waiting for command ${current.commandId ?? '…'} to end${since}`;
    case 'rebooting':
      return `rebooted ${current.startedAt ? clock(current.startedAt, now) : 'just now'}, waiting for the node to come back (boot id still ${w.bootIdBefore ?? 'unknown'})`;
    case 'verifying': {
      if (w.failing && w.failing.length > 0) {
        return `probe ${w.failing.map((f) => `${f.type} failing${f.reason ? `: ${f.reason}` : ''}`).join('; ')}`;
      }
      if (current.commandId) return `probes healthy; waiting for command ${current.commandId} to end`;
      return w.healthySince
        ? `every probe healthy since ${clock(w.healthySince, now)}, waiting for it to hold`
        : 'waiting for the node to report healthy';
    }
    default:
      return 'working';
  }
}

/**
 * A rolling maintenance in words: the counts, the steps the running nodes are at, the failures
 * and, paused, what to do — "Maintaining: 12 of 40 done, 4 running (2 at reboot, 2 at verify),
 * 23 pending, 1 failed (gpu-b7-03 at run:driver-upgrade: …); at most 5 at a time."
 */
function poolMaintenanceInWords(p: PoolMaintenanceProgress): string {
  const w = p.waitingFor;
  if (!w) return '';
  const total =
    w.counts.pending + w.counts.running + w.counts.succeeded + w.counts.failed + w.counts.cancelled;
  const at = w.atStep
    .map((n, i) => (n > 0 ? `${n} at ${w.steps[i]}` : null))
    .filter(Boolean)
    .join(', ');
  const failed = w.nodes.filter((n) => n.status === 'failed');
  const failures =
    failed.length > 0
      ? ` (${failed
          .slice(0, 3)
          .map((n) => `${n.hostname ?? n.nodeId} at ${n.step ?? 'its request'}: ${n.reason ?? 'failed'}`)
          .join('; ')}${failed.length > 3 ? '; …' : ''})`
      : '';
  const counts =
    `${w.counts.succeeded} of ${total} done, ${w.counts.running} running${at ? ` (${at})` : ''}, ` +
    `${w.counts.pending} pending, ${w.counts.failed} failed${failures}`;
  switch (p.phase) {
    case 'paused':
      return (
        `Paused: ${w.failuresSinceResume} of at most ${w.maxFailures} failed since it began or last resumed; ${counts}. ` +
        'The running nodes finish; no other starts until it is resumed (drydock operations resume) or cancelled.'
      );
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return `${p.phase[0]!.toUpperCase()}${p.phase.slice(1)}: ${counts}.`;
    default:
      return `Maintaining: ${counts}; at most ${w.maxConcurrent} at a time, pausing at ${w.maxFailures} failed.`;
  }
}
