/**
 * A scheduler's view of a node (docs/api.md, "A scheduler's view of a node"): what the scheduler
 * that places work there (`slurm:hpc1`) says of it, as its bridge reports it beside Drydock's own
 * state. A node the scheduler marks down carries a condition (`downConditionOf`), like a fault its
 * agent reports.
 */

/** The condition a node carries while a scheduler marks it down, failed or not responding. */
export const SCHEDULER_NODE_DOWN = 'SchedulerNodeDown';
/** The condition a node carries while Kubernetes has it NotReady (Ready False or Unknown) too long. */
export const SCHEDULER_NODE_NOT_READY = 'SchedulerNodeNotReady';

/**
 * The condition a node carries while `source` reports it down, in its scheduler's words:
 * `SchedulerNodeNotReady` for `kubernetes:<cluster>`, `SchedulerNodeDown` for any other.
 */
export function downConditionOf(source: string): string {
  return source.startsWith('kubernetes:') ? SCHEDULER_NODE_NOT_READY : SCHEDULER_NODE_DOWN;
}

/** What a bridge reports of one node in its scheduler. */
export interface SchedulerReport {
  /** The node's name in the scheduler (Slurm's NodeName). */
  name: string;
  /** The scheduler's words for its state, e.g. `mixed+drain`. */
  state: string;
  reason: string | null;
  /** The scheduler places no new work there. */
  cordoned: boolean;
  /** That cordon is Drydock's, set there by the bridge. */
  cordonedByDrydock: boolean;
  /** The scheduler marks it down, failed or not responding — not at Drydock's request. */
  down: boolean;
  /** Where the scheduler and Drydock disagree, in words; null when they agree. */
  disagreement: string | null;
}

/** Whether two reports say the same (an identical report changes nothing). */
export function sameReport(a: SchedulerReport, b: SchedulerReport): boolean {
  return (
    a.name === b.name &&
    a.state === b.state &&
    a.reason === b.reason &&
    a.cordoned === b.cordoned &&
    a.cordonedByDrydock === b.cordonedByDrydock &&
    a.down === b.down &&
    a.disagreement === b.disagreement
  );
}

/** The reason the down condition carries for a source's report: `slurm:hpc1: Not responding`. */
export function downReason(source: string, report: Pick<SchedulerReport, 'state' | 'reason'>): string {
  return `${source}: ${report.reason ?? report.state}`;
}

/** A report of a down condition (`downConditionOf`) to make, as an agent reports a condition. */
export interface DownReport {
  type: string;
  status: boolean;
  reason: string;
}

/**
 * What `source`'s changed view does to the node's down condition (`downConditionOf(source)`), or
 * null for nothing: true with its reason when it turns down (or, down, says why otherwise); when it
 * comes back up, true with the reason of another source of the same condition that still marks the
 * node down, else false — only when the condition is true (`downNow`), so a clear by hand stays
 * until a scheduler says otherwise. `others`: what the node's other sources report.
 */
export function downChange(
  source: string,
  previous: SchedulerReport | null,
  next: SchedulerReport,
  others: { source: string; report: SchedulerReport }[],
  downNow: boolean,
): DownReport | null {
  const type = downConditionOf(source);
  if (next.down) {
    const unchanged = previous?.down && downReason(source, previous) === downReason(source, next);
    return unchanged ? null : { type, status: true, reason: downReason(source, next) };
  }
  if (!previous?.down || !downNow) return null;
  const still = others
    .filter((o) => o.report.down && downConditionOf(o.source) === type)
    .sort((a, b) => (a.source < b.source ? -1 : 1))[0];
  return still
    ? { type, status: true, reason: downReason(still.source, still.report) }
    : { type, status: false, reason: `${source}: ${next.state}` };
}
