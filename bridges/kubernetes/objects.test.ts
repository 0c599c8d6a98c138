import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { blockedBy, budgetNamed, nodeState, workOfPod } from './objects';

const now = Date.parse('2026-12-04T10:00:00Z');
const node = (
  over: {
    ready?: string;
    since?: number;
    unschedulable?: boolean;
    annotation?: string;
    taints?: string[];
    label?: string;
  } = {},
): V1Node => ({
  metadata: {
    name: 'kb-a',
    labels: over.label ? { 'drydock.dev/node': over.label } : {},
    annotations: over.annotation ? { 'drydock.dev/cordoned': over.annotation } : {},
  },
  spec: {
    unschedulable: over.unschedulable,
    taints: (over.taints ?? []).map((key) => ({ key, effect: 'NoSchedule' })),
  },
  status: {
    conditions: [
      {
        type: 'Ready',
        status: over.ready ?? 'True',
        reason: over.ready === 'False' ? 'KubeletNotReady' : 'KubeletReady',
        message: 'PLEG is not healthy',
        lastTransitionTime: new Date(now - (over.since ?? 0)),
      },
    ],
  },
});
const pod = (
  over: Partial<V1Pod['spec']> & { phase?: string; owner?: string; mirror?: boolean } = {},
): V1Pod => ({
  metadata: {
    namespace: 'team-a',
    name: 'web-1',
    uid: 'u1',
    ownerReferences: over.owner
      ? [{ apiVersion: 'apps/v1', kind: over.owner, name: 'x', uid: 'o', controller: true }]
      : [],
    annotations: over.mirror ? { 'kubernetes.io/config.mirror': 'abc' } : {},
  },
  spec: { containers: [], nodeName: 'kb-a', ...over },
  status: { phase: over.phase ?? 'Running', startTime: new Date(now) },
});

describe('a Kubernetes node as the bridge sees it', () => {
  it("is Drydock's cordon only where the annotation says so, and names its Drydock hostname by label", () => {
    expect(
      nodeState(node({ unschedulable: true, annotation: 'drydock: x (op_1)', label: 'gpu-a' }), 60_000, now),
    ).toEqual({
      name: 'kb-a',
      hostname: 'gpu-a',
      state: 'Ready+SchedulingDisabled',
      cordoned: true,
      reason: 'drydock: x (op_1)',
      down: false,
      unresponsive: false,
    });
    // An administrator's kubectl cordon: cordoned, no reason of Drydock's.
    expect(nodeState(node({ unschedulable: true }), 60_000, now)).toMatchObject({
      cordoned: true,
      reason: null,
    });
    // The annotation left on a node someone uncordoned is no cordon.
    expect(nodeState(node({ annotation: 'drydock: x (op_1)' }), 60_000, now)).toMatchObject({
      cordoned: false,
      reason: null,
    });
  });

  it('is down once NotReady has lasted notReadyAfter, saying why', () => {
    expect(nodeState(node({ ready: 'False', since: 59_000 }), 60_000, now)).toMatchObject({
      state: 'NotReady',
      down: false,
    });
    expect(nodeState(node({ ready: 'False', since: 60_000 }), 60_000, now)).toMatchObject({
      down: true,
      reason: 'KubeletNotReady: PLEG is not healthy',
    });
    expect(nodeState(node({ ready: 'Unknown', since: 60_000 }), 60_000, now).state).toBe('Unknown');
  });

  it("shows others' taints, not the cordon's own", () => {
    const state = nodeState(
      node({ unschedulable: true, taints: ['node.kubernetes.io/unschedulable', 'gpu-bad'] }),
      60_000,
      now,
    );
    expect(state).toMatchObject({
      state: 'Ready+SchedulingDisabled+tainted',
      reason: 'taints: gpu-bad:NoSchedule',
    });
  });
});

describe('a pod as the bridge sees it', () => {
  const noTenant = () => null;
  it('is work when bound and not finished, named namespace/name/uid, its end from activeDeadlineSeconds', () => {
    expect(
      workOfPod(pod({ activeDeadlineSeconds: 60, owner: 'ReplicaSet' }), (ns) =>
        ns === 'team-a' ? 'research' : null,
      ),
    ).toEqual({
      id: 'team-a/web-1/u1',
      node: 'kb-a',
      owner: 'team-a',
      tenant: 'research',
      queue: null,
      endsAt: new Date(now + 60_000),
      restartable: true,
    });
    expect(workOfPod(pod(), noTenant)).toMatchObject({ endsAt: null, restartable: false, tenant: null });
    // Terminating is still work: it holds the node until it is gone.
    expect(
      workOfPod({ ...pod(), metadata: { ...pod().metadata, deletionTimestamp: new Date(now) } }, noTenant),
    ).not.toBeNull();
  });

  it('is no work unbound, finished, a DaemonSet pod or a mirror pod', () => {
    expect(workOfPod(pod({ nodeName: undefined }), noTenant)).toBeNull();
    expect(workOfPod(pod({ phase: 'Succeeded' }), noTenant)).toBeNull();
    expect(workOfPod(pod({ phase: 'Failed' }), noTenant)).toBeNull();
    expect(workOfPod(pod({ owner: 'DaemonSet' }), noTenant)).toBeNull();
    expect(workOfPod(pod({ mirror: true }), noTenant)).toBeNull();
  });
});

describe('a refused eviction in words', () => {
  it('names the PodDisruptionBudget and how many it has and needs', () => {
    expect(
      budgetNamed([{ message: 'The disruption budget web needs 3 healthy pods and has 3 currently' }]),
    ).toBe('web');
    expect(budgetNamed([{ message: 'something else' }])).toBeNull();
    const budget = {
      status: { currentHealthy: 3, expectedPods: 4, desiredHealthy: 3, disruptionsAllowed: 0 },
    };
    expect(blockedBy('team-a', 'web', budget)).toBe(
      'eviction blocked by PodDisruptionBudget team-a/web (3 of 4 available, 3 needed)',
    );
    expect(blockedBy('team-a', 'web', undefined)).toBe('eviction blocked by PodDisruptionBudget team-a/web');
  });
});
