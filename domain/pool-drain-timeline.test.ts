import { describe, expect, it } from 'vitest';
import { extendTimeline, type NodeDrainSeen, type PoolDrainNodeTimeline } from './pool-drain-timeline';

const START = '2026-12-05T10:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(START) + minutes * 60_000).toISOString();

const seen = (patch: Partial<NodeDrainSeen>): NodeDrainSeen => ({
  nodeId: 'node_a',
  hostname: 'gpu-a1',
  operationId: null,
  requestedAt: null,
  deadline: null,
  endedAt: null,
  now: 'waiting',
  ...patch,
});

/** The spans of a row as `state from→to`, minutes after START. */
const spansOf = (row: PoolDrainNodeTimeline) =>
  row.spans.map((s) => {
    const minute = (iso: string | null) =>
      iso === null ? '…' : (Date.parse(iso) - Date.parse(START)) / 60_000;
    return `${s.state} ${minute(s.from)}→${minute(s.to)}`;
  });

describe("a pool drain's timeline", () => {
  it('a node waits for its turn, drains, and stays drained; each move at the time its record gives', () => {
    const first = extendTimeline(undefined, seen({}), START, at(1));
    expect(spansOf(first)).toEqual(['waiting 0→…']);
    const drain = { operationId: 'op_a', requestedAt: at(5) };
    const draining = extendTimeline(first, seen({ ...drain, now: 'draining' }), START, at(6));
    expect(spansOf(draining)).toEqual(['waiting 0→5', 'draining 5→…']);
    expect(draining.operationId).toBe('op_a');
    const drained = extendTimeline(
      draining,
      seen({ ...drain, endedAt: at(9), now: 'drained' }),
      START,
      at(10),
    );
    expect(spansOf(drained)).toEqual(['waiting 0→5', 'draining 5→9', 'drained 9→…']);
    // A look that finds it as it was changes nothing.
    expect(
      extendTimeline(drained, seen({ ...drain, endedAt: at(9), now: 'drained' }), START, at(20)),
    ).toEqual(drained);
  });

  it('past its deadline: waits for the budget from the deadline, then its work goes by force when a look sees the slot taken', () => {
    const drain = { operationId: 'op_a', requestedAt: at(2), deadline: at(4) };
    // Requested and past its deadline between two looks: both moves at their record's times.
    const waits = extendTimeline(undefined, seen({ ...drain, now: 'waiting-for-budget' }), START, at(7));
    expect(spansOf(waits)).toEqual(['waiting 0→2', 'draining 2→4', 'waiting-for-budget 4→…']);
    const forced = extendTimeline(waits, seen({ ...drain, now: 'forced-release' }), START, at(12));
    expect(spansOf(forced)).toEqual([
      'waiting 0→2',
      'draining 2→4',
      'waiting-for-budget 4→12',
      'forced-release 12→…',
    ]);
    const drained = extendTimeline(
      forced,
      seen({ ...drain, endedAt: at(13), now: 'drained' }),
      START,
      at(14),
    );
    expect(spansOf(drained).slice(-2)).toEqual(['forced-release 12→13', 'drained 13→…']);
  });

  it('drained past its deadline straight from draining: released by force at the deadline; a refused node fails at once', () => {
    const drain = { operationId: 'op_a', requestedAt: at(1), deadline: at(3), endedAt: at(3.5) };
    const drained = extendTimeline(undefined, seen({ ...drain, now: 'drained' }), START, at(5));
    expect(spansOf(drained)).toEqual([
      'waiting 0→1',
      'draining 1→3',
      'forced-release 3→3.5',
      'drained 3.5→…',
    ]);
    const refused = extendTimeline(undefined, seen({ now: 'failed' }), START, at(2));
    expect(spansOf(refused)).toEqual(['waiting 0→2', 'failed 2→…']);
    // A drain it joined began before the pool drain: its row begins with the pool drain.
    const joined = extendTimeline(undefined, seen({ requestedAt: at(-30), now: 'draining' }), START, at(1));
    expect(spansOf(joined)).toEqual(['draining 0→…']);
  });
});
