import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { SchedulerNodeState, SchedulerWork } from '../../domain/scheduler';

// What the Kubernetes bridge reads of nodes, pods and PodDisruptionBudgets (docs/bridges/kubernetes.md),
// held against a real kube-apiserver by test/bridges/kubernetes-harness.test.ts.

/** A node label naming the Drydock hostname of a node whose Kubernetes name differs. */
export const NODE_LABEL = 'drydock.dev/node';
/** A namespace label naming the Drydock tenant its pods run for. */
export const TENANT_LABEL = 'drydock.dev/tenant';
/** On a node Drydock cordoned: the reason it gave (`drydock: <reason> (<op id>)`). */
export const CORDON_ANNOTATION = 'drydock.dev/cordoned';
/** The taint Kubernetes itself puts on a cordoned node: the cordon's, not someone else's. */
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';
/** A static pod's mirror: the kubelet runs it from a file, no API call can move it. */
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** The longest reason a report carries (the API's limit). */
const REASON_MAX = 256;

/**
 * A node as the bridge sees it: `Ready`, `NotReady` or `Unknown`, `+SchedulingDisabled` when
 * cordoned, `+tainted` when others set taints; its reason Drydock's cordon annotation (only that:
 * it is how the bridge knows its own cordon), else why it is not Ready, else the taints others set; down once Ready has been other than True for `notReadyAfterMs`.
 */
export function nodeState(node: V1Node, notReadyAfterMs: number, now: number): SchedulerNodeState {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const word = ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
  const cordoned = node.spec?.unschedulable === true;
  const taints = (node.spec?.taints ?? [])
    .filter((t) => t.key !== UNSCHEDULABLE_TAINT)
    .map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
  const ours = cordoned ? node.metadata?.annotations?.[CORDON_ANNOTATION] : undefined;
  const notReady = word !== 'Ready' && ready ? [ready.reason, ready.message].filter(Boolean).join(': ') : '';
  const reason = ours ?? (notReady || (taints.length ? `taints: ${taints.join(', ')}` : null));
  const since = ready?.lastTransitionTime ? new Date(ready.lastTransitionTime).getTime() : now;
  const hostname = node.metadata?.labels?.[NODE_LABEL];
  return {
    name: node.metadata!.name!,
    ...(hostname ? { hostname } : {}),
    state: [word, cordoned && 'SchedulingDisabled', taints.length > 0 && 'tainted'].filter(Boolean).join('+'),
    cordoned,
    reason: reason && reason.length > REASON_MAX ? `${reason.slice(0, REASON_MAX - 1)}…` : reason,
    down: ready !== undefined && ready.status !== 'True' && now - since >= notReadyAfterMs,
    unresponsive: false,
  };
}

/** A pod's id as an allocation's external id: `namespace/name/uid` (a new pod of that name is new work). */
export function podId(pod: V1Pod): string {
  return `${pod.metadata!.namespace}/${pod.metadata!.name}/${pod.metadata!.uid}`;
}

/**
 * The work a pod is, or null: only a pod bound to a node and not finished, that is not a
 * DaemonSet's (it belongs to the node, and ignores a cordon) or a static pod's mirror. A
 * terminating pod still holds its node: it is work until it is gone.
 */
export function workOfPod(pod: V1Pod, tenantOf: (namespace: string) => string | null): SchedulerWork | null {
  const node = pod.spec?.nodeName;
  const phase = pod.status?.phase;
  if (!node || phase === 'Succeeded' || phase === 'Failed') return null;
  if (pod.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet' && o.controller)) return null;
  if (pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined) return null;
  const namespace = pod.metadata!.namespace!;
  const started = pod.status?.startTime ? new Date(pod.status.startTime).getTime() : null;
  const limit = pod.spec?.activeDeadlineSeconds;
  return {
    id: podId(pod),
    node,
    owner: namespace,
    tenant: tenantOf(namespace),
    queue: null,
    endsAt: started !== null && limit ? new Date(started + limit * 1000) : null,
    restartable: pod.metadata?.ownerReferences?.some((o) => o.controller) ?? false,
  };
}

/** The PodDisruptionBudget a refused eviction names (`The disruption budget web needs 3 healthy pods …`). */
export function budgetNamed(causes: { message?: string }[]): string | null {
  for (const cause of causes) {
    const named = /^The disruption budget (\S+) needs/.exec(cause.message ?? '');
    if (named) return named[1]!;
  }
  return null;
}

/** A refused eviction in words: `eviction blocked by PodDisruptionBudget ns/web (3 of 4 available, 3 needed)`. */
export function blockedBy(
  namespace: string,
  name: string,
  budget: V1PodDisruptionBudget | undefined,
): string {
  const s = budget?.status;
  const counts = s ? ` (${s.currentHealthy} of ${s.expectedPods} available, ${s.desiredHealthy} needed)` : '';
  return `eviction blocked by PodDisruptionBudget ${namespace}/${name}${counts}`;
}
