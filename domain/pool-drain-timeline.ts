// A pool drain's nodes over time: one row a node, its spans in order (waiting for its turn, then
// its drain: draining, waiting for the pool's disruption budget, its work released by force, and
// how it ended). Each look of the pool drain extends the rows it recorded at its last look from
// what the node drains' records say now, so what no record keeps (when a node began waiting for
// the budget and when it got its slot) is kept by the pool drain's own record.

/** Where a node of a pool drain stands during a span. */
export const POOL_DRAIN_SPAN_STATES = [
  'waiting',
  'draining',
  'waiting-for-budget',
  'forced-release',
  'drained',
  'failed',
] as const;
export type PoolDrainSpanState = (typeof POOL_DRAIN_SPAN_STATES)[number];

/** One span of a node's row: from when, until when (null: still so). */
export interface PoolDrainSpan {
  state: PoolDrainSpanState;
  from: string;
  to: string | null;
}

/** A node's row: its spans, oldest first; the last is open. */
export interface PoolDrainNodeTimeline {
  nodeId: string;
  hostname: string;
  /** Its drain, once the pool drain requested (or joined) it. */
  operationId: string | null;
  spans: PoolDrainSpan[];
}

/** How many of a pool drain's nodes its timeline follows (the first of its selection). */
export const POOL_DRAIN_TIMELINE = 100;

/** What a look finds of one node: its drain's record, and where it stands now. */
export interface NodeDrainSeen {
  nodeId: string;
  hostname: string;
  operationId: string | null;
  /** When its drain was requested (or began, for a drain it joined). */
  requestedAt: string | null;
  /** When its drain releases what is still live by force. */
  deadline: string | null;
  /** When its drain ended. */
  endedAt: string | null;
  now: PoolDrainSpanState;
}

/**
 * The node's row after a look at `now`: its earlier row extended. A move the look did not see
 * happen (the node drain requested and ended between two looks) is placed at the time its record
 * gives: the request, the deadline, the end.
 */
export function extendTimeline(
  earlier: PoolDrainNodeTimeline | undefined,
  seen: NodeDrainSeen,
  startedAt: string,
  now: string,
): PoolDrainNodeTimeline {
  const spans = earlier ? earlier.spans.map((span) => ({ ...span })) : [open('waiting', startedAt)];
  const last = () => spans.at(-1)!;
  // Each move closes the open span at the time it gives and opens the next.
  const move = (state: PoolDrainSpanState, at: string) => {
    if (last().state === state) return;
    const from = latest(last().from, at);
    // A span that lasted no time is no span (a drain joined before the pool drain began).
    if (from === last().from) spans.pop();
    else last().to = from;
    spans.push(open(state, from));
  };
  const pastDeadline = (at: string) => seen.deadline !== null && at > seen.deadline;
  if (seen.requestedAt && last().state === 'waiting') move('draining', seen.requestedAt);
  switch (seen.now) {
    case 'waiting':
      break;
    case 'draining':
      move('draining', now);
      break;
    case 'waiting-for-budget':
      move('waiting-for-budget', last().state === 'draining' ? (seen.deadline ?? now) : now);
      break;
    case 'forced-release':
      move('forced-release', last().state === 'draining' ? (seen.deadline ?? now) : now);
      break;
    case 'drained':
    case 'failed': {
      const end = seen.endedAt ?? now;
      // Drained past its deadline from draining: what was live went by force at the deadline.
      if (seen.now === 'drained' && last().state === 'draining' && pastDeadline(end)) {
        move('forced-release', seen.deadline!);
      }
      move(seen.now, end);
      break;
    }
  }
  return { nodeId: seen.nodeId, hostname: seen.hostname, operationId: seen.operationId, spans };
}

const open = (state: PoolDrainSpanState, from: string): PoolDrainSpan => ({ state, from, to: null });

/** The later of two ISO times (they compare as text). */
const latest = (a: string, b: string) => (a > b ? a : b);
