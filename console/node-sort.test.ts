import type { Schemas } from '@drydock/client';
import { describe, expect, it } from 'vitest';
import { tileState } from './node-states';
import { sortNodes, sortOf } from './node-sort';

type Node = Schemas['Node'];

/** A node as `GET /v1/nodes` lists it: adopted, alive, schedulable, unless `changes` say otherwise. */
function node(hostname: string, changes: Partial<Node> = {}): Node {
  return {
    id: `node_${hostname}`,
    hostname,
    provisionState: 'adopted',
    access: 'allowed',
    cordoned: false,
    maintenance: false,
    noScheduleReasons: [],
    liveness: 'alive',
    labels: [],
    lastSeenAt: null,
    ...changes,
  } as Node;
}

describe('the node list order', () => {
  it('sorts names as people read them, descending with a leading -, ties by hostname', () => {
    const nodes = [node('gpu-10'), node('gpu-2', { poolId: 'b' }), node('gpu-1', { poolId: 'b' })];
    const by = (sort: string) => {
      const order = sortOf(sort);
      if ('problem' in order) throw new Error(order.problem);
      return sortNodes(nodes, order).map((n) => n.hostname);
    };
    expect(by('hostname')).toEqual(['gpu-1', 'gpu-2', 'gpu-10']);
    expect(by('-hostname')).toEqual(['gpu-10', 'gpu-2', 'gpu-1']);
    expect(by('-pool')).toEqual(['gpu-1', 'gpu-2', 'gpu-10']);
  });

  it('refuses a sort it does not know, naming the ones it does', () => {
    for (const bad of ['colour', '--hostname', '-', 'constructor', 'toString']) {
      expect(sortOf(bad)).toEqual({
        problem: expect.stringContaining('sort must be one of hostname, pool,'),
      });
    }
  });
});

describe("a rack map tile's state", () => {
  it('is the worst that holds: unreachable over quarantined over maintenance over draining over cordoned', () => {
    const draining = { cordoned: true, noScheduleReasons: ['draining'] };
    expect(tileState(node('a', { ...draining, liveness: 'unreachable' }))).toBe('unreachable');
    expect(tileState(node('a', { ...draining, maintenance: true, noScheduleReasons: ['quarantined'] }))).toBe(
      'quarantined',
    );
    expect(tileState(node('a', { ...draining, maintenance: true }))).toBe('maintenance');
    expect(tileState(node('a', draining))).toBe('draining');
    expect(tileState(node('a', { cordoned: true }))).toBe('cordoned');
    expect(tileState(node('a', { noScheduleReasons: ['taint:rma'] }))).toBe('unhealthy');
    expect(tileState(node('a', { provisionState: 'pending' }))).toBe('pending');
    expect(tileState(node('a'))).toBe('schedulable');
  });
});
