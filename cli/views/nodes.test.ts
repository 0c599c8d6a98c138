import { describe, expect, it } from 'vitest';
import { nodeDetails, type Node } from './nodes';

const node: Node = {
  id: 'node_01',
  tenantId: 'acme',
  poolId: 'pool-gpu',
  siteId: 'fra1',
  requestedPoolId: null,
  hostname: 'gpu-b7-01',
  displayName: null,
  provisionState: 'adopted',
  access: 'allowed',
  cordoned: true,
  maintenance: false,
  noScheduleReasons: ['cordoned'],
  connectivity: 'connected',
  liveness: 'alive',
  lastSeenAt: null,
  bootId: null,
  bootedAt: null,
  labels: [],
  conditions: [],
  session: { connectivity: 'connected', lastSeenAt: null },
  identityGeneration: 1,
  version: 4,
  createdAt: '2026-12-01T00:00:00.000Z',
  updatedAt: '2026-12-02T00:00:00.000Z',
  deletedAt: null,
  schedulers: [
    {
      source: 'slurm:hpc1',
      name: 'gpu-b7-01',
      state: 'mixed+drain',
      reason: 'drydock: roll-out (op_1)',
      cordoned: true,
      cordonedByDrydock: true,
      down: false,
      disagreement: null,
      observedAt: '2026-12-02T00:00:01.000Z',
      changedAt: '2026-12-02T00:00:01.000Z',
    },
    {
      source: 'slurm:hpc2',
      name: 'b7n1',
      state: 'idle+drain',
      reason: 'bad fan',
      cordoned: true,
      cordonedByDrydock: false,
      down: false,
      disagreement: "slurm:hpc2 has it drained for another reason (bad fan); Drydock's node is schedulable",
      observedAt: '2026-12-02T00:00:02.000Z',
      changedAt: '2026-12-02T00:00:02.000Z',
    },
  ],
};

describe('nodes show', () => {
  it("prints each scheduler's view of the node: its name, state, reason, whose cordon, a disagreement", () => {
    const shown = nodeDetails(node);
    expect(shown).toMatch(
      /^Scheduler slurm:hpc1: +gpu-b7-01 mixed\+drain \(drydock: roll-out \(op_1\)\), cordoned by Drydock; seen 2026-12-02T00:00:01.000Z$/m,
    );
    expect(shown).toMatch(
      /^Scheduler slurm:hpc2: +b7n1 idle\+drain \(bad fan\), cordoned there; seen .*; disagrees: slurm:hpc2 has it drained/m,
    );
  });
});

describe('nodes show of a pending node', () => {
  it('names the pool it asked for, which approving without --pool puts it in', () => {
    const pending: Node = { ...node, provisionState: 'pending', poolId: null, requestedPoolId: 'pool-gpu' };
    expect(nodeDetails(pending)).toMatch(/^Pool: +- \(asks for pool-gpu\)$/m);
    expect(nodeDetails({ ...pending, requestedPoolId: null })).toMatch(/^Pool: +-$/m);
    expect(nodeDetails(node)).toMatch(/^Pool: +pool-gpu$/m);
  });
});
