/** A pool's `maxUnavailable` when its policy names none: one node at a time. */
export const DEFAULT_MAX_UNAVAILABLE = 1;

/**
 * A pool's disruption budget as a forced release sees it: at most `max` of its nodes may be
 * unavailable at once, `holders` (their ids, sorted) are now.
 */
export interface Budget {
  max: number;
  used: number;
  holders: string[];
}

/**
 * How many of a pool's `poolNodes` (its nodes not deleted) may be unavailable at once, from the
 * policy's `maxUnavailable`: a count as it is, or a percent (`"25%"`) of the pool, rounded down so
 * the budget is never more than the policy allows — but at least 1, so a small pool with a
 * percent policy can still be drained (`"25%"` of 3 nodes is 1, not 0). Only `0` or `"0%"` closes
 * the budget: then no drain ever evicts. Default 1.
 */
export function budgetMax(maxUnavailable: number | string | undefined, poolNodes: number): number {
  const limit = maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE;
  if (typeof limit === 'number') return Math.max(0, Math.floor(limit));
  const percent = Number(limit.slice(0, -1));
  if (!(percent > 0)) return 0;
  return Math.max(1, Math.floor((poolNodes * percent) / 100));
}

/** Whether a node may take (or keep) a slot: it holds one already, or one is free. */
export function grantsSlot(budget: Budget, nodeId: string): boolean {
  return budget.holders.includes(nodeId) || budget.used < budget.max;
}

/** The budget in a few words for the Temporal UI: `1/1 used by node_…`. */
export function describeBudget(budget: Budget): string {
  const by = budget.holders.length > 0 ? ` by ${budget.holders.join(', ')}` : '';
  return `${budget.used}/${budget.max} used${by}`;
}
