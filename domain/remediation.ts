/** Remediation actions, one per attempt, tried in order (docs/lifecycle/remediation.md). */
export const DEFAULT_LADDER = ['reset-accelerator', 'reboot'] as const;
export const MAX_ATTEMPTS = 2;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_MAX_UNHEALTHY = '40%';
/** How long a condition must hold clear before it counts as cleared (policy `healthyAfter`). */
export const DEFAULT_HEALTHY_AFTER_MS = 60_000;

/** Condition types: what agents report, e.g. GpuXidError. */
export const CONDITION_TYPE = /^[A-Za-z][A-Za-z0-9]{0,62}$/;
export const conditionReason = (type: string) => `condition:${type}`;

export type Ladders = Record<string, string[]>;

/** The ladder for a condition type: a configured one, else the default. */
export function ladderFor(type: string, ladders: Ladders = {}): string[] {
  return ladders[type] ?? [...DEFAULT_LADDER];
}

export type AttemptOutcome = 'cleared' | 'failed' | 'timed-out' | 'cancelled';

export interface AttemptRecord {
  attempt: number;
  action: string;
  commandId: string;
  outcome: AttemptOutcome | null;
  refuseReason?: string | null;
}

/**
 * How many unhealthy-or-remediating live nodes a pool tolerates: `maxUnhealthy` is a count, or a
 * percent of its live nodes. A pool with more than this starts no automatic remediation.
 */
export function unhealthyAllowance(maxUnhealthy: number | string | undefined, liveNodes: number): number {
  const limit = maxUnhealthy ?? DEFAULT_MAX_UNHEALTHY;
  if (typeof limit === 'number') return limit;
  return (liveNodes * Number(limit.slice(0, -1))) / 100;
}

/** Storm: counting the node that just reported, more than the allowance are unhealthy. */
export function isStorm(
  unhealthyIncludingThis: number,
  liveNodes: number,
  maxUnhealthy?: number | string,
): boolean {
  return unhealthyIncludingThis > unhealthyAllowance(maxUnhealthy, liveNodes);
}

/** The counts that put a pool over its `maxUnhealthy`, recorded when a remediation escalates for it. */
export interface Storm {
  liveNodes: number;
  unhealthyNodes: number;
  maxUnhealthy: number | string;
}
