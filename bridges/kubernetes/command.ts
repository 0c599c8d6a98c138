import { KubeConfig } from '@kubernetes/client-node';
import { defineWordCommand } from '../../cli-kit/word-command';
import { bridgeUntilStopped, clusterFlags, DEFAULT_API, DEFAULT_SWEEP_MS, drydockFlags } from '../command';
import { EMPTY_KUBERNETES_CONFIG, loadKubernetesConfig } from '../config';
import { kubernetesScheduler } from './scheduler';

/** How long Ready may be False/Unknown before the node carries SchedulerNodeNotReady, unless told. */
const DEFAULT_NOT_READY_AFTER_MS = 60_000;

/** `drydock-bridge kubernetes`: a Kubernetes cluster's nodes and pods in step with Drydock, until stopped. */
export const kubernetesCommand = defineWordCommand({
  words: ['kubernetes'],
  summary: "keep a Kubernetes cluster's drains and pods in step with Drydock until stopped",
  operands: [],
  flags: {
    ...clusterFlags('kubernetes', {
      config:
        'node name and namespace maps, the grace of a deletion, when NotReady is down (YAML; docs/bridges/kubernetes.md)',
      configDefault: "none: names as they are, tenants from namespace labels or the nodes, pods' own grace",
      sweep: 'the safety net under the watches and the event feed',
    }),
    kubeconfig: {
      type: 'string',
      value: 'FILE',
      help: 'the kubeconfig to use',
      env: 'KUBECONFIG',
      default: "~/.kube/config, else the pod's service account (in-cluster)",
    },
    ...drydockFlags,
  },
  async run({ flags, json }) {
    const config = flags.config === undefined ? EMPTY_KUBERNETES_CONFIG : loadKubernetesConfig(flags.config);
    const kubeconfig = new KubeConfig();
    if (flags.kubeconfig === undefined) kubeconfig.loadFromDefault();
    else kubeconfig.loadFromFile(flags.kubeconfig);
    const scheduler = kubernetesScheduler({
      cluster: flags.cluster,
      kubeconfig,
      deleteGraceMs: config.deleteGraceMs,
      notReadyAfterMs: config.notReadyAfterMs ?? DEFAULT_NOT_READY_AFTER_MS,
    });
    try {
      return await bridgeUntilStopped({
        scheduler,
        config,
        sweepEveryMs: flags['sweep-every'] ?? config.sweepEveryMs ?? DEFAULT_SWEEP_MS,
        api: flags.api ?? DEFAULT_API,
        token: flags.token,
        json,
      });
    } finally {
      await scheduler.stop();
    }
  },
});
