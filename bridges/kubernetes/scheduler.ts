import {
  ApiException,
  CoreV1Api,
  makeInformer,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import type { EndingAction } from '../../domain/observed';
import type { SchedulerWork } from '../../domain/scheduler';
import type { Scheduler, WorkWatch } from '../scheduler';
import { pooledConfiguration } from './connections';
import {
  blockedBy,
  budgetNamed,
  CORDON_ANNOTATION,
  nodeState,
  podId,
  TENANT_LABEL,
  workOfPod,
} from './objects';

/** After a watch failed, the first wait before it starts again; doubled up to MAX_RESTART_MS. */
const FIRST_RESTART_MS = 500;
const MAX_RESTART_MS = 30_000;

export interface KubernetesOptions {
  cluster: string;
  kubeconfig: KubeConfig;
  /** The grace period of a pod deleted at a drain's deadline, in ms; null: the pod's own. */
  deleteGraceMs: number | null;
  /** How long Ready may be False/Unknown before the node counts as down. */
  notReadyAfterMs: number;
}

/** A watched kind: its informer's cache, and whether it holds the cluster's current objects. */
interface Watched<T extends KubernetesObject> {
  cache: ObjectCache<T>;
  synced: () => boolean;
}

/**
 * The Kubernetes adapter: informers (list, then watch) on nodes, pods, PodDisruptionBudgets and
 * namespaces; reads come from their caches, so a pass costs Kubernetes nothing. Cordon and
 * uncordon patch the node; work ends through the Eviction API (PodDisruptionBudgets honoured)
 * while a drain waits, and by deletion once its deadline passed.
 */
export function kubernetesScheduler(options: KubernetesOptions): Scheduler & { stop(): Promise<void> } {
  const kc = options.kubeconfig;
  const configuration = pooledConfiguration(kc);
  const core = new CoreV1Api(configuration);
  const policy = new PolicyV1Api(configuration);
  let watch: WorkWatch | null = null;
  const informers: Informer<KubernetesObject>[] = [];
  let stopped = false;

  /** Starts an informer and keeps it going: after a failure it starts again, with backoff. */
  function follow<T extends KubernetesObject>(path: string, list: () => Promise<{ items: T[] }>): Watched<T> {
    const informer = makeInformer<T>(kc, path, list as never);
    informers.push(informer as unknown as Informer<KubernetesObject>);
    // In step once a start listed and watches without an error since: a start whose list failed
    // resolves too (its error callback ran), and a cache never filled is no answer.
    let synced = false;
    let failed = false;
    let wait = FIRST_RESTART_MS;
    const start = async () => {
      failed = false;
      await informer.start().catch(() => (failed = true));
      if (failed || stopped) return;
      synced = true;
      wait = FIRST_RESTART_MS;
      watch?.changed();
    };
    const restart = () => {
      failed = true;
      synced = false;
      if (stopped) return;
      setTimeout(() => void start(), wait).unref();
      wait = Math.min(MAX_RESTART_MS, wait * 2);
    };
    informer.on('error', restart);
    void start();
    return { cache: informer, synced: () => synced };
  }

  const nodes = follow<V1Node>('/api/v1/nodes', () => core.listNode());
  const pods = follow<V1Pod>('/api/v1/pods', () => core.listPodForAllNamespaces());
  const budgets = follow<V1PodDisruptionBudget>('/apis/policy/v1/poddisruptionbudgets', () =>
    policy.listPodDisruptionBudgetForAllNamespaces(),
  );
  const namespaces = follow<V1Namespace>('/api/v1/namespaces', () => core.listNamespace());

  const requireSynced = (...watched: Watched<KubernetesObject>[]) => {
    if (!watched.every((w) => w.synced())) {
      throw new Error('the watches of kube-apiserver are not in step (starting, or kube-apiserver away)');
    }
  };
  const tenantOf = (namespace: string) =>
    namespaces.cache.get(namespace)?.metadata?.labels?.[TENANT_LABEL] ?? null;

  // What a pass reads only changes with these: each change wakes one (passes coalesce).
  const changed = () => watch?.changed();
  const counted = new Set<string>();
  // The budget that refused each pod's last eviction, as the cache held it then: asked again as
  // soon as the budget moved and allows a disruption (roomNow), not on the clock alone.
  const refusedBy = new Map<string, { namespace: string; name: string; version: string | undefined }>();
  const seePod = (pod: V1Pod) => {
    const id = podId(pod);
    const work = workOfPod(pod, tenantOf);
    if (work && !counted.has(id)) {
      counted.add(id);
      changed();
    } else if (!work && counted.delete(id)) {
      refusedBy.delete(id);
      watch?.ended([id]);
    }
  };
  const informerOf = <T extends KubernetesObject>(w: Watched<T>) => w.cache as unknown as Informer<T>;
  informerOf(pods).on('add', seePod);
  informerOf(pods).on('update', seePod);
  informerOf(pods).on('delete', (pod) => {
    const id = podId(pod);
    refusedBy.delete(id);
    if (counted.delete(id)) watch?.ended([id]);
  });
  const seen = new Map<string, string>();
  const seeNode = (node: V1Node) => {
    const digest = JSON.stringify(nodeState(node, options.notReadyAfterMs, Date.now()));
    if (seen.get(node.metadata!.name!) !== digest) changed();
    seen.set(node.metadata!.name!, digest);
  };
  informerOf(nodes).on('add', seeNode);
  informerOf(nodes).on('update', seeNode);
  informerOf(nodes).on('delete', changed);
  // A budget's status moves as pods come and go: an eviction it refused may go through now that it
  // has room, or is gone. Budgets no refused eviction waits on wake nothing.
  const waitedOn = ({ metadata }: V1PodDisruptionBudget) =>
    [...refusedBy.values()].some((r) => r.namespace === metadata?.namespace && r.name === metadata?.name);
  const seeBudget = (budget: V1PodDisruptionBudget) => {
    if (hasRoom(budget) && waitedOn(budget)) changed();
  };
  informerOf(budgets).on('add', seeBudget);
  informerOf(budgets).on('update', seeBudget);
  informerOf(budgets).on('delete', (budget) => {
    if (waitedOn(budget)) changed();
  });
  informerOf(namespaces).on('change', changed);

  const inTurn = inTurnByKey();
  const patch = (name: string, body: object) =>
    core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));

  return {
    source: `kubernetes:${options.cluster}`,
    async listNodes() {
      requireSynced(nodes);
      const now = Date.now();
      return nodes.cache.list().map((n) => nodeState(n, options.notReadyAfterMs, now));
    },
    async listWork() {
      requireSynced(pods, namespaces);
      return pods.cache.list().flatMap((pod) => workOfPod(pod, tenantOf) ?? []);
    },
    watchWork(w) {
      watch = w;
      return () => (watch = null);
    },
    async cordon(node, reason) {
      await patch(node, {
        spec: { unschedulable: true },
        metadata: { annotations: { [CORDON_ANNOTATION]: reason } },
      });
    },
    async uncordon(node) {
      await patch(node, {
        spec: { unschedulable: false },
        metadata: { annotations: { [CORDON_ANNOTATION]: null } },
      });
    },
    endAction: (_work, forced) => (forced ? 'delete' : 'evict'),
    roomNow(work) {
      const refused = refusedBy.get(work.id);
      if (!refused || !budgets.synced()) return undefined;
      const budget = budgets.cache.get(refused.name, refused.namespace);
      if (!budget) return undefined;
      return budget.metadata?.resourceVersion !== refused.version && hasRoom(budget);
    },
    endWork(work: SchedulerWork, action: EndingAction) {
      const [namespace, name] = work.id.split('/') as [string, string];
      const controller = pods.cache
        .get(name, namespace)
        ?.metadata?.ownerReferences?.find((o) => o.controller);
      return inTurn(controller?.uid ?? work.id, () => endPod(work, action));
    },
    async stop() {
      stopped = true;
      await Promise.all(informers.map((i) => i.stop()));
    },
  };

  /** Evicts or deletes the pod `work` is, with a refusal in words (its budget and counts) as the error. */
  async function endPod(work: SchedulerWork, action: EndingAction): Promise<string> {
    const [namespace, name, uid] = work.id.split('/') as [string, string, string];
    // The uid precondition: a new pod of the same name is other work, never ended for this one.
    const preconditions = { uid };
    try {
      if (action === 'evict') {
        await core.createNamespacedPodEviction({
          name,
          namespace,
          body: {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name, namespace },
            deleteOptions: { preconditions },
          },
        });
        refusedBy.delete(work.id);
        return 'evicted: the pod is terminating';
      }
      const grace = options.deleteGraceMs === null ? undefined : Math.round(options.deleteGraceMs / 1000);
      await core.deleteNamespacedPod({
        name,
        namespace,
        gracePeriodSeconds: grace,
        body: { preconditions },
      });
      return `deleted${grace === undefined ? '' : ` (grace ${grace} s)`}: the pod is terminating`;
    } catch (error) {
      if (!(error instanceof ApiException)) throw error;
      if (error.code === 404 || error.code === 409) return 'already gone';
      const status = parseStatus(error.body);
      if (error.code === 429) {
        const name = budgetNamed(status.details?.causes ?? []);
        if (name) {
          const budget = budgets.cache.get(name, namespace);
          refusedBy.set(work.id, { namespace, name, version: budget?.metadata?.resourceVersion });
          throw new Error(blockedBy(namespace, name, budget));
        }
      }
      throw new Error(
        `${action === 'evict' ? 'eviction' : 'deletion'} refused (${error.code}): ${status.message ?? 'no reason given'}`,
      );
    }
  }
}

/** The budget allows a disruption now, as its status says. */
const hasRoom = (budget: V1PodDisruptionBudget) => (budget.status?.disruptionsAllowed ?? 0) > 0;

/**
 * Asks in turn by key: `ask` runs after every earlier ask of its `key` settled. A controller's pods
 * share a PodDisruptionBudget, and kube-apiserver answers concurrent evictions under one budget by
 * letting one through and making the others wait out an update conflict (about 500 ms) before it
 * refuses them: one after another, a refusal is answered at once.
 */
function inTurnByKey() {
  const asking = new Map<string, Promise<unknown>>();
  return <T>(key: string, ask: () => Promise<T>): Promise<T> => {
    const mine = (asking.get(key) ?? Promise.resolve()).then(ask);
    const settled = mine.catch(() => undefined);
    asking.set(key, settled);
    void settled.then(() => {
      if (asking.get(key) === settled) asking.delete(key);
    });
    return mine;
  };
}

/** The Status kube-apiserver answered a refusal with. */
function parseStatus(body: unknown): { message?: string; details?: { causes?: { message?: string }[] } } {
  if (typeof body !== 'string') return (body ?? {}) as object;
  try {
    return JSON.parse(body) as object;
  } catch {
    return { message: body };
  }
}
