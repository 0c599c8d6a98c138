import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { startKubernetes, type KubernetesCluster } from '../scripts/services/kubernetes';
import { observedAllocations, startBridge, untilReported, type BridgeProcess } from './support/bridge';
import { readNode, useCli } from './support/cli';
import { call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { bash, operatorEnv, sectionedBlocks } from './support/runbook';

/**
 * The Kubernetes rack runbook, run as an operator would: its ```bash blocks, as written, in a bash
 * with `set -euo pipefail` and the built kubectl on PATH, against a real kube-apiserver,
 * controller manager, scheduler and etcd with kwok's kubelets, the real API and worker, and
 * `drydock-bridge kubernetes` as its own process. The rack runs a Deployment whose budget paces
 * its evictions, one whose budget allows none (the deadline deletes it) and a DaemonSet's pods
 * (left alone); the other rack takes the replacements.
 */

const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/drain-a-kubernetes-rack.md', import.meta.url));

const CLUSTER = 'k8s-fra1';
const SOURCE = `kubernetes:${CLUSTER}`;
const POOL = 'pool-h100-east';
const RACK = ['gpu-b7-01', 'gpu-b7-02'] as const;
const OTHER = 'gpu-b8-01';
const NS = 'team-a';
const CHANGE = 'CHG-1234';

const h = useHarness();
const cli = useCli(h);

const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-runbook-kubernetes-rack-'));
let kube: KubernetesCluster;
let bridge: BridgeProcess;
/** Drydock node id by hostname (= the Kubernetes node's name). */
const ids: Record<string, string> = {};
const { live, of: allocationsOf } = observedAllocations(h, SOURCE);

const markdown = readFileSync(RUNBOOK, 'utf8');
const runnable = sectionedBlocks(markdown).filter((b) => b.lang === 'bash');

const PARTS = {
  drain: [
    'Before you start',
    'Check that the bridge sees the rack',
    'Make room in the disruption budget',
    'Drain the rack',
    'Watch Kubernetes follow',
    'Wait for the rack to drain',
    'Record what was drained',
    'Roll out the driver',
  ],
  putBack: ['Before you start', 'Put the rack back'],
};

interface Pod {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase?: string };
}

/** The bash blocks of these sections, in the page's order, as one script. */
function script(sections: readonly string[]): string {
  const chosen = runnable.filter((b) => sections.includes(b.section));
  return ['set -euo pipefail', ...chosen.map((b) => `# runbook line ${b.line}\n${b.code}`)].join('\n');
}

/** A fresh operator shell running `sections`; the shell's exit code is for the caller to judge. */
async function operator(sections: readonly string[], name: string) {
  const env = operatorEnv(dir, {
    DRYDOCK_API: cli.api,
    DRYDOCK_TOKEN: h.operatorKey,
    POOL,
    RACK: 'b7',
    CLUSTER,
    DEADLINE: '20s',
    ROLL_OUT: joinPath(dir, 'roll-out-driver'),
    CHANGE,
    KUBECONFIG: kube.kubeconfig,
  });
  const text = script(sections);
  writeFileSync(joinPath(dir, `${name}.sh`), text);
  const run = await bash(text, env, dir, 180_000);
  return { ...run, said: `stdout:\n${run.stdout}\nstderr:\n${run.stderr}` };
}

const kubectl = (args: string[], input?: string) => kube.kubectl(args, input);
const apply = (object: object) => kubectl(['apply', '-f', '-'], JSON.stringify(object));
const podsOf = async (selector: string) =>
  (JSON.parse(await kubectl(['get', 'pods', '-n', NS, '-l', selector, '-o', 'json'])) as { items: Pod[] })
    .items;
const isRunning = (p: Pod) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp;
const podId = (p: Pod) => `${p.metadata.namespace}/${p.metadata.name}/${p.metadata.uid}`;
const template = (labels: Record<string, string>) => ({
  metadata: { labels },
  spec: {
    containers: [{ name: 'main', image: 'registry.invalid/work:1' }],
    terminationGracePeriodSeconds: 1,
  },
});
const workload = (name: string, replicas: number, minAvailable: number) => [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template({ app: name }) },
  },
  {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: NS },
    spec: { minAvailable, selector: { matchLabels: { app: name } } },
  },
];

beforeAll(async () => {
  kube = await startKubernetes({
    home: loadConfig().DRYDOCK_HOME,
    nodes: [...RACK, OTHER].map((name) => ({ name })),
    log: (line) => console.log(`[kubernetes] ${line}`),
  });
  await seedPool(h, { id: POOL, tenantId: 'acme' });
  for (const name of RACK)
    ids[name] = await seedNode(h, { poolId: POOL, hostname: name, labels: { rack: 'b7' } });
  ids[OTHER] = await seedNode(h, { poolId: POOL, hostname: OTHER, labels: { rack: 'b8' } });
  await kubectl(['create', 'namespace', NS]);
  const key = await call(h, 'POST', '/v1/keys', { body: { name: `kubernetes-bridge-${CLUSTER}` } });
  bridge = startBridge({
    api: cli.api,
    token: key.body.secret as string,
    argv: ['kubernetes', '--cluster', CLUSTER, '--sweep-every', '10s'],
    env: kube.env,
  });
  // The operator's shell has kubectl: the one built for this cluster.
  operatorEnv(dir, {});
  symlinkSync(kube.kubectlPath, joinPath(dir, 'bin', 'kubectl'));
  // The site's roll-out, here harmless: it notes the machine and whether Kubernetes has it cordoned.
  const rollOut = joinPath(dir, 'roll-out-driver');
  writeFileSync(
    rollOut,
    `#!/bin/sh\necho "$1 $(kubectl get node "$1" -o jsonpath='{.spec.unschedulable}')" >> '${dir}/rolled-out.txt'\n`,
  );
  chmodSync(rollOut, 0o755);
  await untilReported(h, Object.values(ids));
}, 40 * 60_000);

afterAll(async () => {
  await bridge?.stop();
  await kube?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/runbooks/drain-a-kubernetes-rack.md', () => {
  it('has its steps in order, runs every bash block in this test, and keeps the site-specific roll-out a placeholder', () => {
    const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([...PARTS.drain, 'Put the rack back', 'When something goes wrong']);
    const tested = new Set([...PARTS.drain, ...PARTS.putBack]);
    for (const section of tested) expect(runnable.map((b) => b.section)).toContain(section);
    for (const block of runnable) expect(tested, `line ${block.line}`).toContain(block.section);
    const all = runnable.map((b) => b.code).join('\n');
    expect(all).toContain('drydock pools drain "$POOL" --selector "rack=$RACK"');
    expect(all).toContain('"$ROLL_OUT" "$host"');
    // kubectl only reads: the bridge does the cordons, evictions and deletions.
    expect(all).not.toMatch(/kubectl (cordon|uncordon|drain|delete|evict|patch|taint|annotate|label)/);
    expect(markdown).toMatch(/\[bridges\/kubernetes\.md\]\(\.\.\/bridges\/kubernetes\.md\)/);
    for (const part of Object.values(PARTS)) {
      const checked = spawnSync('bash', ['-n', '-c', script(part)], { encoding: 'utf8' });
      expect(checked.stderr).toBe('');
    }
  });

  it('runs as written: evictions paced by the budget, the unevictable pod deleted by the deadline, DaemonSet pods kept, the rack back in both', async () => {
    // Everything starts on the rack (the other node cordoned while it is placed), then the other
    // node takes what the rack gives up.
    await kubectl(['cordon', OTHER]);
    for (const object of [...workload('web', 4, 3), ...workload('pinned', 1, 1)]) await apply(object);
    await apply({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: NS },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: template({ app: 'agent' }) },
    });
    const before = await eventually(
      async () => {
        const [web, pinned, agent] = [
          await podsOf('app=web'),
          await podsOf('app=pinned'),
          await podsOf('app=agent'),
        ];
        const all = [...web, ...pinned];
        return (
          web.length === 4 &&
          pinned.length === 1 &&
          agent.length === 3 &&
          [...all, ...agent].every(isRunning) && { all, agent }
        );
      },
      30_000,
      100,
    );
    await kubectl(['uncordon', OTHER]);
    await eventually(
      async () => (await live(ids[RACK[0]]!)).length + (await live(ids[RACK[1]]!)).length === 5,
      30_000,
      100,
    );
    // The budgets have counted their pods.
    await eventually(
      async () => {
        const pdbs = JSON.parse(await kubectl(['get', 'pdb', '-n', NS, '-o', 'json'])) as {
          items: { metadata: { name: string }; status?: { currentHealthy?: number } }[];
        };
        return (
          pdbs.items.length === 2 &&
          pdbs.items.every((p) => p.status?.currentHealthy === (p.metadata.name === 'web' ? 4 : 1))
        );
      },
      30_000,
      100,
    );

    const drained = await operator(PARTS.drain, 'drain');
    expect(drained.code, drained.said).toBe(0);
    const out = drained.stdout;
    expect(out).toMatch(/^disruption budget of pool-h100-east: 1 nodes out at once; this change needs 2$/m);
    expect(out).toMatch(/^pool pool-h100-east: pool-drain op_[0-9a-z]{26} (pending|running), 2 nodes$/m);
    expect(out).toMatch(/^2 of 2 nodes cordoned in Kubernetes by Drydock$/m);
    expect(out).toMatch(/^pool-h100-east: Succeeded: 2 drained, 0 draining, 0 pending, 0 failed\.$/m);
    expect(out).toMatch(/^2 nodes drained; pods evicted: 4, deleted by the deadline: 1$/m);
    const pinned = before.all.find((p) => p.metadata.name.startsWith('pinned-'))!;
    expect(out).toContain(
      `${pinned.spec.nodeName}: ${podId(pinned)} delete (deleted: the pod is terminating)`,
    );

    // Each rack pod: evicted (the web ones) or deleted past the deadline (the pinned one), released
    // by the bridge once gone; the deleted one as a forced release.
    for (const pod of before.all) {
      const [allocation] = await allocationsOf(podId(pod));
      expect(allocation, pod.metadata.name).toMatchObject({
        live: false,
        releasedBy: `key:kubernetes-bridge-${CLUSTER}`,
        ending: { action: pod === pinned ? 'delete' : 'evict' },
      });
    }
    const forced = await eventsOf(h, ids[pinned.spec.nodeName!]!, 'allocation.force-released');
    expect(forced).toHaveLength(1);
    // The replacements of web run on the other rack.
    const web = await podsOf('app=web');
    expect(web.filter(isRunning).map((p) => p.spec.nodeName)).toEqual([OTHER, OTHER, OTHER, OTHER]);
    // The DaemonSet's pods are the same pods as before.
    expect((await podsOf('app=agent')).map((p) => p.metadata.uid).sort()).toEqual(
      before.agent.map((p) => p.metadata.uid).sort(),
    );
    // The roll-out ran on each rack machine once, while Kubernetes had it cordoned.
    expect(readFileSync(joinPath(dir, 'rolled-out.txt'), 'utf8')).toBe(
      RACK.map((name) => `${name} true\n`).join(''),
    );

    const back = await operator(PARTS.putBack, 'put-back');
    expect(back.code, back.said).toBe(0);
    expect(back.stdout).toMatch(
      new RegExp(`^rack b7 of ${POOL} back in service in Drydock and ${SOURCE}: 2 nodes, ${CHANGE}$`, 'm'),
    );
    for (const name of RACK) {
      const node = JSON.parse(await kubectl(['get', 'node', name, '-o', 'json'])) as {
        metadata: { annotations?: Record<string, string> };
        spec: { unschedulable?: boolean };
      };
      expect(node.spec.unschedulable).toBeFalsy();
      expect(node.metadata.annotations?.['drydock.dev/cordoned']).toBeUndefined();
      expect(await readNode(h, ids[name]!)).toMatchObject({ cordoned: false, noScheduleReasons: [] });
    }
    expect((await call(h, 'GET', `/v1/pools/${POOL}`)).body.policy).toEqual({});
    // The other rack: never cordoned by Drydock, in either.
    const otherEvents = await eventsOf(h, ids[OTHER]!, 'node.');
    expect(otherEvents.map((e) => e.type).filter((t) => t !== 'node.scheduler.changed')).toEqual([]);
  }, 300_000);
});
