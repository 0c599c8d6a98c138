import type { NodeAxes } from './node';

/** Capacity buckets in the order docs/concepts.md lists them: the first that matches wins. */
export const CAPACITY_BUCKETS = [
  'maintenance',
  'unreachable',
  'cordoned',
  'unhealthy',
  'schedulable',
] as const;
export type CapacityBucket = (typeof CAPACITY_BUCKETS)[number];

export function capacityBucket(
  node: Pick<NodeAxes, 'maintenance' | 'liveness' | 'cordoned' | 'noScheduleReasons'>,
): CapacityBucket {
  if (node.maintenance) return 'maintenance';
  if (node.liveness !== 'alive') return 'unreachable';
  if (node.cordoned) return 'cordoned';
  // Any NoSchedule reason, a dedication included, counts as unhealthy for capacity.
  if (node.noScheduleReasons.length > 0) return 'unhealthy';
  return 'schedulable';
}

/** Counts of nodes per bucket, every bucket present. */
export function capacityOf(nodes: Parameters<typeof capacityBucket>[0][]): Record<CapacityBucket, number> {
  const counts = Object.fromEntries(CAPACITY_BUCKETS.map((b) => [b, 0])) as Record<CapacityBucket, number>;
  for (const node of nodes) counts[capacityBucket(node)]++;
  return counts;
}

/** How long each pool's capacity history is kept by default (DRYDOCK_CAPACITY_HISTORY_DAYS). */
export const DEFAULT_CAPACITY_HISTORY_DAYS = 30;

/** The windows of capacity history a pool's chart shows, each with its step: about 60–170 points a chart. */
export const CAPACITY_HISTORY_WINDOWS = {
  '1h': { minutes: 60, stepMinutes: 1 },
  '24h': { minutes: 24 * 60, stepMinutes: 10 },
  '7d': { minutes: 7 * 24 * 60, stepMinutes: 60 },
} as const;
export type CapacityHistoryWindow = keyof typeof CAPACITY_HISTORY_WINDOWS;
