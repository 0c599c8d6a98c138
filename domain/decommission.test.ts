import { describe, expect, it } from 'vitest';
import {
  confirmationIdentities,
  decommissionBlockers,
  dependencyDigest,
  type DecommissionDependencies,
} from './decommission';

const base: DecommissionDependencies = {
  node: {
    id: 'node_01k5w8v3x9q2m4n6p8r0s2t4v6',
    hostname: 'gpu-b7-03',
    displayName: 'GPU B7-03',
    version: 14,
    provisionState: 'adopted',
    liveness: 'offline',
    access: 'allowed',
    cordoned: true,
    deleted: false,
    identityGeneration: 1,
  },
  openAllocations: [],
  artifactCopies: [],
  soleArtifactCopies: [],
  runningOperations: [],
  credentials: ['cred_a', 'cred_b'],
  certificates: ['c1'],
  accelerators: [
    { id: 'acc_1', state: 'active' },
    { id: 'acc_2', state: 'active' },
  ],
  storageRoots: [{ id: 'sr_1', state: 'writable' }],
  current: { scheduler: 1, telemetry: 1, inventory: 1 },
};

describe('dependencyDigest', () => {
  it('is stable under reordering of any list', () => {
    const reordered = {
      ...base,
      credentials: ['cred_b', 'cred_a'],
      accelerators: [...base.accelerators].reverse(),
    };
    expect(dependencyDigest(reordered)).toBe(dependencyDigest(base));
    expect(dependencyDigest(base)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('changes when any dependency changes', () => {
    const variants: DecommissionDependencies[] = [
      { ...base, node: { ...base.node, version: 15 } },
      { ...base, node: { ...base.node, liveness: 'unreachable' } },
      { ...base, node: { ...base.node, access: 'blocked' } },
      { ...base, node: { ...base.node, identityGeneration: 2 } },
      { ...base, openAllocations: [{ id: 'alloc_1', kind: 'job', endsAt: null }] },
      { ...base, soleArtifactCopies: [{ id: 'ac_1', artifactId: 'weights-7b', path: '/data/w' }] },
      { ...base, artifactCopies: [{ id: 'ac_1', artifactId: 'weights-7b', path: '/data/w' }] },
      { ...base, runningOperations: [{ id: 'op_1', kind: 'drain' }] },
      { ...base, credentials: ['cred_a'] },
      { ...base, certificates: [] },
      { ...base, accelerators: [{ id: 'acc_1', state: 'active' }] },
      {
        ...base,
        accelerators: [
          { id: 'acc_1', state: 'active' },
          { id: 'acc_2', state: 'decommissioned' },
        ],
      },
      { ...base, storageRoots: [{ id: 'sr_1', state: 'read_only' }] },
      { ...base, current: { ...base.current, telemetry: 0 } },
    ];
    const digests = new Set([dependencyDigest(base), ...variants.map(dependencyDigest)]);
    expect(digests.size).toBe(variants.length + 1);
  });
});

describe('decommissionBlockers', () => {
  it('has none for a stopped, idle node', () => {
    expect(decommissionBlockers(base)).toEqual([]);
  });

  it('names each blocker with its kind and id', () => {
    const blocked = decommissionBlockers({
      ...base,
      node: { ...base.node, liveness: 'alive' },
      openAllocations: [{ id: 'alloc_1', kind: 'residency', endsAt: '2030-01-01T00:00:00.000Z' }],
      soleArtifactCopies: [{ id: 'ac_1', artifactId: 'weights-7b', path: '/data/w' }],
      runningOperations: [{ id: 'op_1', kind: 'drain' }],
    });
    expect(blocked.map((b) => [b.kind, b.id])).toEqual([
      ['liveness', base.node.id],
      ['allocation', 'alloc_1'],
      ['artifact', 'weights-7b'],
      ['operation', 'op_1'],
    ]);
  });

  it('refuses decommissioned, purging and deleted nodes', () => {
    for (const node of [
      { ...base.node, provisionState: 'decommissioned' as const },
      { ...base.node, provisionState: 'purging' as const },
      { ...base.node, deleted: true },
    ]) {
      expect(decommissionBlockers({ ...base, node }).map((b) => b.kind)).toContain('state');
    }
  });
});

describe('confirmationIdentities', () => {
  it('lists id, hostname and display name', () => {
    expect(confirmationIdentities(base.node)).toEqual([base.node.id, 'gpu-b7-03', 'GPU B7-03']);
    expect(confirmationIdentities({ ...base.node, displayName: null })).toEqual([base.node.id, 'gpu-b7-03']);
  });
});
