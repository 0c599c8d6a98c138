import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  Watch,
  type V1Pod,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config';
import { startKubernetes, type KubernetesCluster } from '../../scripts/services/kubernetes';
import { eventually } from '../support/harness';

// What the Kubernetes bridge (issue 32) will rely on, held against a real kube-apiserver,
// kube-controller-manager and kube-scheduler (k8s.io/kubernetes v1.34.4, built here), Debian's
// etcd and kwok playing the kubelets: nodes Ready, a Deployment's pods Running on both nodes, a
// PDB's disruptionsAllowed, the Eviction API's 201 and 429, a cordon, DaemonSet pods, a deletion
// seen by a watch, and a kube-apiserver restart.

const A = 'kw-a';
const B = 'kw-b';
const NS = 'default';
const WEB = { app: 'web' };

let kube: KubernetesCluster;
let core: CoreV1Api;
let apps: AppsV1Api;
let policy: PolicyV1Api;
let kc: KubeConfig;

const pods = async (labelSelector: string) =>
  (await core.listNamespacedPod({ namespace: NS, labelSelector })).items;
const isRunning = (pod: V1Pod) => pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp;
const cordon = (name: string, unschedulable: boolean) =>
  core.patchNode(
    { name, body: { spec: { unschedulable } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
const pdbStatus = async () =>
  (await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: NS })).status;
const evict = (name: string) =>
  core.createNamespacedPodEvictionWithHttpInfo({
    name,
    namespace: NS,
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } },
  });
/** What an ApiException carries: the Status kube-apiserver answered with. */
const statusOf = (error: unknown) => {
  if (!(error instanceof ApiException)) throw error;
  const body = typeof error.body === 'string' ? (JSON.parse(error.body) as unknown) : error.body;
  return {
    code: error.code,
    body: body as { message: string; details?: { causes?: { message: string }[] } },
  };
};
const template = (labels: Record<string, string>): V1PodTemplateSpec => ({
  metadata: { labels },
  // kwok runs nothing: the image is never pulled.
  spec: { containers: [{ name: 'main', image: 'registry.invalid/work:1' }] },
});
const bare = (name: string, spec: Partial<V1Pod['spec']> = {}): V1Pod => ({
  metadata: { name, labels: { app: 'bare' } },
  spec: { containers: [{ name: 'main', image: 'registry.invalid/work:1' }], ...spec },
});

function logMemory(when: string): void {
  const mib = Object.entries(kube.memory()).map(
    ([name, bytes]) => `${name} ${Math.round(bytes / 2 ** 20)} MiB`,
  );
  console.log(`[kubernetes] resident memory ${when}: ${mib.join(', ')}`);
}

beforeAll(
  async () => {
    kube = await startKubernetes({
      home: loadConfig().DRYDOCK_HOME,
      nodes: [
        {
          name: A,
          labels: { 'drydock.dev/node': 'gpu-a' },
          allocatable: { cpu: '64', memory: '512Gi', pods: '110', 'nvidia.com/gpu': '8' },
        },
        { name: B },
      ],
      log: (line) => console.log(`[kubernetes] ${line}`),
    });
    logMemory('after start');
    kc = new KubeConfig();
    kc.loadFromFile(kube.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
    policy = kc.makeApiClient(PolicyV1Api);
  },
  // The first run on a machine builds kube-apiserver and the rest here (.ci/run builds them before).
  40 * 60_000,
);

afterAll(async () => {
  if (kube) logMemory('at the end');
  await kube?.stop();
});

describe('the Kubernetes harness: real kube-apiserver, controller manager, scheduler, etcd and kwok', () => {
  it('gives every node Ready and schedulable, with its labels and what it offers', async () => {
    const nodes = (await core.listNode()).items;
    expect(nodes.map((n) => n.metadata?.name).sort()).toEqual([A, B]);
    for (const node of nodes) {
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(node.spec?.unschedulable).toBeFalsy();
      expect(node.metadata?.labels?.['kubernetes.io/hostname']).toBe(node.metadata?.name);
    }
    const a = nodes.find((n) => n.metadata?.name === A)!;
    expect(a.metadata?.labels?.['drydock.dev/node']).toBe('gpu-a');
    expect(a.status?.allocatable?.['nvidia.com/gpu']).toBe('8');
    // The built kubectl speaks to the built kube-apiserver (both stamped with the release).
    const version = JSON.parse(await kube.kubectl(['version', '--output=json'])) as Record<
      string,
      { gitVersion: string }
    >;
    expect(version.clientVersion?.gitVersion).toBe('v1.34.4');
    expect(version.serverVersion?.gitVersion).toBe('v1.34.4');
  });

  it('runs a Deployment of 4 replicas as 4 Running pods, two bound to each node', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 4,
          selector: { matchLabels: WEB },
          template: {
            ...template(WEB),
            spec: {
              ...template(WEB).spec!,
              topologySpreadConstraints: [
                {
                  maxSkew: 1,
                  topologyKey: 'kubernetes.io/hostname',
                  whenUnsatisfiable: 'DoNotSchedule',
                  labelSelector: { matchLabels: WEB },
                },
              ],
            },
          },
        },
      },
    });
    const running = await eventually(async () => {
      const all = await pods('app=web');
      return all.length === 4 && all.every(isRunning) && all;
    }, 30_000);
    expect(running.filter((p) => p.spec?.nodeName === A)).toHaveLength(2);
    expect(running.filter((p) => p.spec?.nodeName === B)).toHaveLength(2);
    for (const pod of running) {
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
  });

  it('computes a PodDisruptionBudget of minAvailable 3 over the 4 pods: 1 disruption allowed', async () => {
    await policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: { metadata: { name: 'web' }, spec: { minAvailable: 3, selector: { matchLabels: WEB } } },
    });
    const status = await eventually(async () => {
      const s = await pdbStatus();
      return s?.expectedPods === 4 && s;
    }, 20_000);
    expect(status).toMatchObject({ currentHealthy: 4, desiredHealthy: 3, disruptionsAllowed: 1 });
  });

  it('evicts a pod (201): it goes and a replacement comes; a second eviction before that one runs is refused (429), naming the PDB', async () => {
    // With both nodes cordoned the replacement cannot be scheduled: it cannot be healthy in time.
    await cordon(A, true);
    await cordon(B, true);
    const [first, second] = (await pods('app=web')).map((p) => p.metadata!.name!);
    const accepted = await evict(first!);
    expect(accepted.httpStatusCode).toBe(201);
    await eventually(async () => !(await pods('app=web')).some((p) => p.metadata?.name === first), 10_000);
    const replacement = await eventually(async () => {
      const all = await pods('app=web');
      return all.length === 4 && all.find((p) => p.status?.phase === 'Pending');
    }, 10_000);
    expect(replacement.metadata?.name).not.toBe(first);
    await eventually(async () => {
      const s = await pdbStatus();
      return s?.currentHealthy === 3 && s.disruptionsAllowed === 0;
    }, 10_000);

    const refused = await evict(second!).then(
      () => expect.fail('the second eviction was accepted'),
      statusOf,
    );
    expect(refused.code).toBe(429);
    expect(refused.body.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(refused.body.details?.causes?.map((c) => c.message)).toEqual([
      'The disruption budget web needs 3 healthy pods and has 3 currently',
    ]);
    expect(
      (await core.readNamespacedPod({ name: second!, namespace: NS })).metadata?.deletionTimestamp,
    ).toBeUndefined();

    await cordon(A, false);
    await cordon(B, false);
    await eventually(async () => {
      const all = await pods('app=web');
      return all.length === 4 && all.every(isRunning);
    }, 20_000);
    await eventually(async () => (await pdbStatus())?.disruptionsAllowed === 1, 20_000);
  });

  it('schedules no new pod on a cordoned node (tainted unschedulable), and does once it is uncordoned', async () => {
    await cordon(A, true);
    const taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
    // The node lifecycle controller taints a cordoned node: taints a bridge shows, not its own.
    await eventually(async () => {
      const node = await core.readNode({ name: A });
      return node.spec?.taints?.some((t) => t.key === taint.key && t.effect === taint.effect);
    }, 20_000);
    await core.createNamespacedPod({
      namespace: NS,
      body: bare('pinned', { nodeSelector: { 'kubernetes.io/hostname': A } }),
    });
    for (const name of ['free-1', 'free-2'])
      await core.createNamespacedPod({ namespace: NS, body: bare(name) });
    const placed = await eventually(async () => {
      const all = await pods('app=bare');
      const pinned = all.find((p) => p.metadata?.name === 'pinned');
      const unschedulable = pinned?.status?.conditions?.some(
        (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
      );
      return unschedulable && all.filter(isRunning).length === 2 && all;
    }, 20_000);
    expect(placed.filter(isRunning).map((p) => p.spec?.nodeName)).toEqual([B, B]);
    expect(placed.find((p) => p.metadata?.name === 'pinned')?.spec?.nodeName).toBeUndefined();

    await cordon(A, false);
    const pinned = await eventually(async () => {
      const pod = await core.readNamespacedPod({ name: 'pinned', namespace: NS });
      return isRunning(pod) && pod;
    }, 20_000);
    expect(pinned.spec?.nodeName).toBe(A);
    await eventually(async () => !(await core.readNode({ name: A })).spec?.taints?.length, 20_000);
  });

  it('runs a DaemonSet as one pod on each node, owned by the DaemonSet', async () => {
    const labels = { app: 'node-agent' };
    await apps.createNamespacedDaemonSet({
      namespace: NS,
      body: {
        metadata: { name: 'node-agent' },
        spec: { selector: { matchLabels: labels }, template: template(labels) },
      },
    });
    const running = await eventually(async () => {
      const all = await pods('app=node-agent');
      return all.length === 2 && all.every(isRunning) && all;
    }, 30_000);
    expect(running.map((p) => p.spec?.nodeName).sort()).toEqual([A, B]);
    for (const pod of running) {
      expect(pod.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'DaemonSet', name: 'node-agent', controller: true }),
      ]);
    }
  });

  it('deletes a pod: it goes away, and a watch sees DELETED', async () => {
    await core.createNamespacedPod({ namespace: NS, body: bare('doomed') });
    await eventually(
      async () => isRunning(await core.readNamespacedPod({ name: 'doomed', namespace: NS })),
      20_000,
    );
    const seen: string[] = [];
    let deleted!: (at: number) => void;
    const gone = new Promise<number>((done) => (deleted = done));
    const watching = await new Watch(kc).watch(
      `/api/v1/namespaces/${NS}/pods`,
      { fieldSelector: 'metadata.name=doomed' },
      (phase) => {
        seen.push(phase);
        if (phase === 'DELETED') deleted(Date.now());
      },
      () => {},
    );
    try {
      await eventually(async () => seen.includes('ADDED'), 10_000);
      const deleting = Date.now();
      await core.deleteNamespacedPod({ name: 'doomed', namespace: NS });
      console.log(`[kubernetes] pod deleted → watch DELETED in ${(await gone) - deleting} ms`);
    } finally {
      watching.abort();
    }
    expect(seen).toContain('DELETED');
    await expect(
      core.readNamespacedPod({ name: 'doomed', namespace: NS }).catch(statusOf),
    ).resolves.toMatchObject({
      code: 404,
    });
  });

  it('restarts kube-apiserver: the same clients work again and every object is still there', async () => {
    const before = (await pods('app in (web,node-agent,bare)')).map((p) => p.metadata?.uid).sort();
    await kube.restartApiserver();
    const after = await eventually(
      async () =>
        (await pods('app in (web,node-agent,bare)').catch(() => undefined))
          ?.map((p) => p.metadata?.uid)
          .sort(),
      20_000,
    );
    expect(after).toEqual(before);
    expect(
      (await apps.readNamespacedDeployment({ name: 'web', namespace: NS })).status?.availableReplicas,
    ).toBe(4);
    expect((await pdbStatus())?.disruptionsAllowed).toBe(1);
    expect(
      (await kube.kubectl(['get', 'nodes', '--no-headers', '-o', 'custom-columns=NAME:.metadata.name']))
        .trim()
        .split('\n'),
    ).toEqual([A, B]);
    // kwok reconnected: the nodes stay Ready, and a new pod still runs.
    await core.createNamespacedPod({ namespace: NS, body: bare('after-restart') });
    await eventually(
      async () => isRunning(await core.readNamespacedPod({ name: 'after-restart', namespace: NS })),
      20_000,
    );
    for (const node of (await core.listNode()).items) {
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
  });
});
