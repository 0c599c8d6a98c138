import { parseDuration } from './duration';

/** Remediation actions, one per attempt, tried in order (docs/lifecycle/remediation.md). */
export const DEFAULT_LADDER = ['reset-accelerator', 'reboot'] as const;
/** Attempts that ran without clearing the condition before a remediation escalates (refused rungs do not count). */
export const MAX_ATTEMPTS = 2;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_MAX_UNHEALTHY = '40%';
/** How long a condition must hold clear before it counts as cleared (policy `healthyAfter`). */
export const DEFAULT_HEALTHY_AFTER_MS = 60_000;

/** Condition types: what agents report, e.g. GpuXidError. */
export const CONDITION_TYPE = /^[A-Za-z][A-Za-z0-9]{0,62}$/;
/** Remediation action names: what the agent maps to a command line, e.g. reset-accelerator. */
export const ACTION_NAME = /^[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*$/;
export const MAX_LADDER_RUNGS = 10;
export const MAX_ATTEMPT_TIMEOUT_MS = 24 * 3_600_000;
export const MAX_HEALTHY_AFTER_MS = 3_600_000;
export const conditionReason = (type: string) => `condition:${type}`;

/** One condition type's remediation in a pool's policy (`policy.remediation.<type>`). */
export interface ConditionRemediationPolicy {
  ladder?: string[];
  /** A duration such as `10m`. */
  attemptTimeout?: string;
  /** A duration such as `60s`. */
  healthyAfter?: string;
}

/** `policy.remediation`: per condition type. */
export type RemediationPolicy = Record<string, ConditionRemediationPolicy>;

/** How a remediation of one condition runs, resolved from its pool's policy when it begins. */
export interface RemediationPlan {
  ladder: string[];
  attemptTimeoutMs: number;
  healthyAfterMs: number;
}

/** The plan for a condition type: the pool policy's settings for it, the defaults for the rest. */
export function remediationPlan(type: string, policy: RemediationPolicy = {}): RemediationPlan {
  const own = Object.hasOwn(policy, type) ? policy[type]! : {};
  const duration = (text: string | undefined, fallback: number) =>
    text === undefined ? fallback : (parseDuration(text) ?? fallback);
  return {
    ladder: own.ladder ? [...own.ladder] : [...DEFAULT_LADDER],
    attemptTimeoutMs: duration(own.attemptTimeout, DEFAULT_ATTEMPT_TIMEOUT_MS),
    healthyAfterMs: duration(own.healthyAfter, DEFAULT_HEALTHY_AFTER_MS),
  };
}

/**
 * How an attempt ended: `cleared`; `acked` (the action ran, the condition did not clear in the
 * attempt timeout); `refused` (the node could not run it); `timed-out` (the node never answered);
 * `cancelled`.
 */
export type AttemptOutcome = 'cleared' | 'acked' | 'refused' | 'timed-out' | 'cancelled';

export interface AttemptRecord {
  attempt: number;
  action: string;
  commandId: string;
  outcome: AttemptOutcome | null;
  refuseReason?: string | null;
}

/** An attempt that ran without clearing the condition: it counts toward `MAX_ATTEMPTS`. */
export const ranUncleared = (outcome: AttemptOutcome | null) =>
  outcome === 'acked' || outcome === 'timed-out';

/**
 * How many unhealthy-or-remediating live nodes a pool tolerates: `maxUnhealthy` is a count, or a
 * percent of its live nodes. A pool with more than this starts no second automatic remediation.
 */
export function unhealthyAllowance(maxUnhealthy: number | string | undefined, liveNodes: number): number {
  const limit = maxUnhealthy ?? DEFAULT_MAX_UNHEALTHY;
  if (typeof limit === 'number') return limit;
  return (liveNodes * Number(limit.slice(0, -1))) / 100;
}

/**
 * Storm: counting the node that just reported, more than the allowance are unhealthy, and another
 * remediation already runs in the pool — one at a time is always allowed, so a pool of one or two
 * nodes can still heal itself.
 */
export function isStorm(
  unhealthyIncludingThis: number,
  liveNodes: number,
  maxUnhealthy: number | string | undefined,
  othersRemediating: number,
): boolean {
  return othersRemediating > 0 && unhealthyIncludingThis > unhealthyAllowance(maxUnhealthy, liveNodes);
}

/** The counts that put a pool over its `maxUnhealthy`, recorded when a remediation escalates for it. */
export interface Storm {
  liveNodes: number;
  unhealthyNodes: number;
  remediating: number;
  maxUnhealthy: number | string;
}
