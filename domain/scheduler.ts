import { REFUSED, type Ending, type EndingAction } from './observed';
import type { SchedulerReport } from './scheduler-view';

/**
 * The rules a scheduler bridge follows, whichever the scheduler (docs/bridges/slurm.md): Drydock
 * decides whether a node takes new work, the scheduler enforces it; the scheduler decides where
 * work runs, Drydock records it. The adapters under bridges/ only read and write the scheduler.
 */

/** A node as its scheduler sees it. */
export interface SchedulerNodeState {
  /** The scheduler's own name of the node (Slurm's NodeName, a Kubernetes node's name). */
  name: string;
  /** The Drydock hostname the scheduler names for it, where it does (a Kubernetes node's label). */
  hostname?: string;
  /** The scheduler's words for its state, e.g. `mixed+drain`. */
  state: string;
  /** The scheduler places no new work there (Slurm: the DRAIN flag). */
  cordoned: boolean;
  /** Why, as the scheduler records it (Slurm's Reason). */
  reason: string | null;
  /** The scheduler marks it down or failed. */
  down: boolean;
  /**
   * The scheduler cannot reach it just now (Slurm's NOT_RESPONDING): down once that has lasted
   * `UNRESPONSIVE_GRACE_MS` — Slurm says it for a second after every RESUME.
   */
  unresponsive: boolean;
}

/** Work running on a node, as its scheduler lists it. */
export interface SchedulerWork {
  /** The scheduler's id of the work on this node: the allocation's external id. */
  id: string;
  /** The node it runs on, by the scheduler's name. */
  node: string;
  /** Who it runs for in the scheduler (a Slurm account, a Kubernetes namespace): what maps to a tenant. */
  owner: string | null;
  /** The Drydock tenant the scheduler itself names, where it does (a namespace's label). */
  tenant?: string | null;
  /** Where it was queued (a Slurm partition): what the end policy is chosen by. */
  queue: string | null;
  endsAt: Date | null;
  /** The scheduler can put it back in the queue (a Slurm job's requeue flag). */
  restartable: boolean;
}

const PREFIX = 'drydock:';

/**
 * The reason a bridge gives the scheduler for a node Drydock cordoned: the drain's reason and
 * operation id (`drydock: driver roll-out (op_…)`), or `drydock: cordoned` outside a drain.
 */
export function drydockReason(drain: { id: string; reason: string | null } | null): string {
  return drain ? `${PREFIX} ${drain.reason ?? 'drain'} (${drain.id})` : `${PREFIX} cordoned`;
}

/** Whether the scheduler's reason is one a bridge wrote: only then may a bridge lift it. */
export function isDrydockReason(reason: string | null): boolean {
  return reason !== null && reason.startsWith(PREFIX);
}

/** What a bridge does to a node in its scheduler so that it agrees with Drydock's cordon. */
export type NodeStep = { kind: 'cordon'; reason: string } | { kind: 'uncordon' } | null;

/**
 * Cordoned in Drydock and not in the scheduler: cordon it, with the open drain's reason (or
 * `drydock: cordoned`); cordoned there by Drydock for another reason while a drain is open: give
 * it the drain's. A drain's reason stays once it ended (the node stays cordoned for the work it was
 * drained for). Not cordoned in Drydock, cordoned there by Drydock: lift it. A cordon someone else
 * set in the scheduler is never touched.
 */
export function nodeStep(
  cordoned: boolean,
  scheduler: SchedulerNodeState,
  drain: { id: string; reason: string | null } | null,
): NodeStep {
  const ours = isDrydockReason(scheduler.reason);
  if (cordoned) {
    const reason = drydockReason(drain);
    if (!scheduler.cordoned) return { kind: 'cordon', reason };
    return ours && drain && scheduler.reason !== reason ? { kind: 'cordon', reason } : null;
  }
  return scheduler.cordoned && ours ? { kind: 'uncordon' } : null;
}

/** How long a scheduler must say it cannot reach a node before the node counts as down. */
export const UNRESPONSIVE_GRACE_MS = 30_000;

/**
 * The report of a node: whose cordon it is, where the scheduler and Drydock disagree, and whether
 * it is down — unresponsive counts once the scheduler has said this same state for
 * `UNRESPONSIVE_GRACE_MS` (`previous`: the view Drydock holds, when it holds one).
 */
export function nodeReport(
  cordoned: boolean,
  scheduler: SchedulerNodeState,
  schedulerName: string,
  previous: { state: string; changedAt: string } | null,
  now: number,
): SchedulerReport {
  const ours = scheduler.cordoned && isDrydockReason(scheduler.reason);
  let disagreement: string | null = null;
  if (scheduler.cordoned && !ours && !cordoned) {
    disagreement =
      `${schedulerName} has it drained for another reason (${scheduler.reason ?? 'none given'}); ` +
      "Drydock's node is schedulable and leaves that drain alone";
  }
  return {
    name: scheduler.name,
    state: scheduler.state,
    reason: scheduler.reason,
    cordoned: scheduler.cordoned,
    cordonedByDrydock: ours,
    down:
      scheduler.down ||
      (scheduler.unresponsive &&
        previous?.state === scheduler.state &&
        now - Date.parse(previous.changedAt) >= UNRESPONSIVE_GRACE_MS),
    disagreement,
  };
}

/** How Slurm ends a job a drain's deadline lets go: back in its queue, or for good. */
export type SlurmEndAction = Extract<EndingAction, 'requeue' | 'cancel'>;

/** Per queue (partition), how a bridge ends the work a drain's deadline lets go. */
export interface EndPolicy {
  /** By queue name; `default` for the rest. */
  byQueue: Record<string, SlurmEndAction>;
  default: SlurmEndAction;
}

/** Requeue where the policy says so and the work can be requeued; otherwise cancel. */
export function endActionFor(policy: EndPolicy, work: SchedulerWork): SlurmEndAction {
  const wanted = (work.queue !== null ? policy.byQueue[work.queue] : undefined) ?? policy.default;
  return wanted === 'requeue' && work.restartable ? 'requeue' : 'cancel';
}

/** Which tenant work runs for: the one its scheduler names, its owner through the map, the fallback, the node's. */
export function tenantFor(
  work: Pick<SchedulerWork, 'owner' | 'tenant'>,
  map: Record<string, string>,
  fallback: string | null,
  nodeTenant: string | null,
): string | null {
  return work.tenant ?? (work.owner !== null ? map[work.owner] : undefined) ?? fallback ?? nodeTenant;
}

/** A live observed allocation of the bridge's source, as Drydock lists it. */
export interface ObservedAllocation {
  id: string;
  nodeId: string;
  externalId: string;
  endRequestedAt: string | null;
  ending: Ending | null;
}

/** Work on a matched node, with the Drydock node and tenant it goes to. */
export interface PlacedWork {
  work: SchedulerWork;
  nodeId: string;
  tenantId: string;
}

export interface WorkPlan {
  /** Running, not recorded (or recorded on another node: released first). */
  observe: PlacedWork[];
  /** Recorded, no longer running: the scheduler says it is gone. */
  release: ObservedAllocation[];
  /** Recorded, still running, and to be asked to end: politely, or `forced` (a drain's deadline asked). */
  end: { allocation: ObservedAllocation; work: SchedulerWork; action: EndingAction; forced: boolean }[];
}

/** How a scheduler asks work to end, as a bridge's plan needs to know it. */
export interface EndAsking {
  /**
   * Politely while a drain waits for the work (`forced` false; null: the scheduler leaves work to
   * end by itself, as Slurm's jobs do), or once a drain's deadline let it go.
   */
  endAction(work: SchedulerWork, forced: boolean): EndingAction | null;
  /**
   * Whether what refused the last polite ask of this work has room now: true (a
   * PodDisruptionBudget allows a disruption since), asked again at once; false (it has not moved,
   * or still allows none), asked again when it moves or after END_AGAIN_AFTER_MS at the latest;
   * undefined (it cannot tell, or the method is absent), after REFUSED_AGAIN_AFTER_MS.
   */
  roomNow?(work: SchedulerWork): boolean | undefined;
}

/** How long a bridge leaves the scheduler to end work it accepted to end before asking again. */
export const END_AGAIN_AFTER_MS = 30_000;
/**
 * How long after a polite ask was refused a bridge asks again when the scheduler cannot tell
 * whether what refused it has room (EndAsking.roomNow; kubectl drain: 5 s): a
 * PodDisruptionBudget frees up in seconds. A forced ask refused waits `END_AGAIN_AFTER_MS`: what
 * refuses it (a permission, a job that cannot be requeued) does not pass by itself.
 */
export const REFUSED_AGAIN_AFTER_MS = 1_000;

/**
 * Compares what runs with what Drydock records: what to record, release and end. Work on a node
 * whose drain is open (`draining`) is asked politely where the scheduler can; work a deadline
 * let go (`endRequestedAt`) by force. The same ask is repeated only after `END_AGAIN_AFTER_MS`;
 * a polite one refused, as soon as what refused it has room, else as `roomNow` says.
 */
export function workPlan(
  running: PlacedWork[],
  recorded: ObservedAllocation[],
  draining: ReadonlySet<string>,
  asking: EndAsking,
  now: number,
): WorkPlan {
  const runningById = new Map(running.map((r) => [r.work.id, r]));
  const recordedById = new Map(recorded.map((a) => [a.externalId, a]));
  const plan: WorkPlan = { observe: [], release: [], end: [] };
  for (const allocation of recorded) {
    const current = runningById.get(allocation.externalId);
    if (!current || current.nodeId !== allocation.nodeId) {
      plan.release.push(allocation);
      continue;
    }
    const forced = allocation.endRequestedAt !== null;
    const action = forced || draining.has(allocation.nodeId) ? asking.endAction(current.work, forced) : null;
    if (
      action !== null &&
      !askedLately(allocation, action, forced, now, () => asking.roomNow?.(current.work))
    ) {
      plan.end.push({ allocation, work: current.work, action, forced });
    }
  }
  for (const placed of running) {
    const was = recordedById.get(placed.work.id);
    if (!was || was.nodeId !== placed.nodeId) plan.observe.push(placed);
  }
  return plan;
}

function askedLately(
  allocation: ObservedAllocation,
  action: EndingAction,
  forced: boolean,
  now: number,
  roomNow: () => boolean | undefined,
): boolean {
  const { ending } = allocation;
  if (ending === null || ending.action !== action) return false;
  const room = !forced && ending.answer.startsWith(REFUSED) ? roomNow() : false;
  if (room === true) return false;
  const wait = room === undefined ? REFUSED_AGAIN_AFTER_MS : END_AGAIN_AFTER_MS;
  return now - Date.parse(ending.at) < wait;
}
