import type { Liveness } from './node';

/** Timings of heartbeats and liveness (docs/lifecycle/liveness.md); tests shrink them to seconds. */
export interface LivenessSettings {
  /** How often the sweep runs. */
  sweepEveryMs: number;
  /** A node not seen for this long is unreachable. */
  leaseMs: number;
  /** A node not seen for this long has lost its session (disconnected). */
  sessionTimeoutMs: number;
  /** A sweep that follows a gap longer than this (controller or database down) starts a grace. */
  outageMs: number;
  /** How long the grace lasts: ages that could not be flushed meanwhile do not count. */
  graceMs: number;
}

export const DEFAULT_LIVENESS: LivenessSettings = {
  sweepEveryMs: 5_000,
  leaseMs: 40_000,
  sessionTimeoutMs: 25_000,
  outageMs: 20_000,
  graceMs: 5 * 60_000,
};

/** Agents heartbeat this often; the API flushes last-seen times this often (one batch). */
export const HEARTBEAT_EVERY_MS = 10_000;
export const HEARTBEAT_FLUSH_EVERY_MS = 15_000;

export const NODE_UNREACHABLE = 'NodeUnreachable';

/** What a sweep does to one node, or null. Pure: `seenAt` is last seen, else its join. */
export function livenessStep(
  node: {
    liveness: Liveness;
    connectivity: 'connected' | 'disconnected';
    seenAt: Date;
    unreachableSince: Date | null;
    lostAfterMs: number | null;
  },
  now: Date,
  settings: LivenessSettings,
): 'disconnect' | 'unreachable' | 'lost' | null {
  const age = now.getTime() - node.seenAt.getTime();
  if (node.liveness === 'alive' && age > settings.leaseMs) return 'unreachable';
  if (node.connectivity === 'connected' && age > settings.sessionTimeoutMs) return 'disconnect';
  if (
    node.liveness === 'unreachable' &&
    node.lostAfterMs !== null &&
    node.unreachableSince !== null &&
    now.getTime() - node.unreachableSince.getTime() > node.lostAfterMs
  ) {
    return 'lost';
  }
  return null;
}
