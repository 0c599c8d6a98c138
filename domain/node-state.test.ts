import { describe, expect, it } from 'vitest';
import { nodeStateOf, type NodeStateFields } from './node-state';

/** An adopted, alive, schedulable node, unless `changes` say otherwise. */
const node = (changes: Partial<NodeStateFields> = {}): NodeStateFields => ({
  liveness: 'alive',
  access: 'allowed',
  provisionState: 'adopted',
  cordoned: false,
  maintenance: false,
  noScheduleReasons: [],
  ...changes,
});

describe("a node's one state", () => {
  it('is the worst that holds: unreachable over blocked over quarantined over maintenance over draining over cordoned', () => {
    const draining = { cordoned: true, noScheduleReasons: ['draining'] };
    expect(nodeStateOf(node({ ...draining, liveness: 'unreachable', access: 'blocked' }))).toBe(
      'unreachable',
    );
    expect(nodeStateOf(node({ ...draining, access: 'blocked', noScheduleReasons: ['quarantined'] }))).toBe(
      'blocked',
    );
    expect(nodeStateOf(node({ ...draining, maintenance: true, noScheduleReasons: ['quarantined'] }))).toBe(
      'quarantined',
    );
    expect(nodeStateOf(node({ ...draining, maintenance: true }))).toBe('maintenance');
    expect(nodeStateOf(node(draining))).toBe('draining');
    expect(nodeStateOf(node({ cordoned: true }))).toBe('cordoned');
    expect(nodeStateOf(node({ noScheduleReasons: ['taint:rma'] }))).toBe('unhealthy');
    expect(nodeStateOf(node({ provisionState: 'pending' }))).toBe('pending');
    expect(nodeStateOf(node({ liveness: 'decommissioned' }))).toBe('decommissioned');
    expect(nodeStateOf(node())).toBe('schedulable');
  });
});
