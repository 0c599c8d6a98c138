import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { formatElapsed, GoBuildProgress, goInstall, progressLines } from './go-install';
import { Fatal, spawnDaemon, sweepAbandoned, untilReady, type Daemon } from './daemons';
import { issueCertificate, writeKey } from './pki';
import { freePort } from './process';

const exec = promisify(execFile);

/** The Kubernetes release the tests run: k8s.io/kubernetes, its staging modules at v0.34.4. */
export const KUBERNETES_VERSION = 'v1.34.4';
export const KWOK_VERSION = 'v0.7.0';
/** The wrapper module that pins the staging modules (k8s.io/kubernetes cannot be `go install`ed). */
const BUILD_MODULE = fileURLToPath(new URL('./kubernetes-build', import.meta.url));
const PROGRAMS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'] as const;
type Program = (typeof PROGRAMS)[number];
/** How many nodes the harness creates at once. */
const NODES_AT_ONCE = 16;
/** The annotation kwok manages a node by (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export type KubernetesBinaries = Record<Program | 'kwok' | 'etcd', string>;

/**
 * kube-apiserver, kube-controller-manager, kube-scheduler and kubectl built from k8s.io/kubernetes
 * into `<home>/kubernetes-<version>/`, and kwok into `<home>/kwok-<version>/`, each when missing
 * (the first build takes minutes: progress every 30 s, then its time); etcd is Debian's.
 */
export async function ensureKubernetes(
  home: string,
  log: (line: string) => void = () => {},
): Promise<KubernetesBinaries> {
  const etcd = await onPath('etcd');
  if (etcd === null) {
    throw new Error('etcd is not installed: apt-get install etcd-server (.ci/run does)');
  }
  const dir = resolve(home, `kubernetes-${KUBERNETES_VERSION}`);
  const built = Object.fromEntries(PROGRAMS.map((p) => [p, join(dir, p)])) as Record<Program, string>;
  for (const program of PROGRAMS) {
    if (!existsSync(built[program])) await buildProgram(program, built[program], log);
  }
  const kwokDir = resolve(home, `kwok-${KWOK_VERSION}`);
  const kwok = join(kwokDir, 'kwok');
  if (!existsSync(kwok)) {
    await goInstall([`sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}`], {
      what: `kwok ${KWOK_VERSION}`,
      bin: kwokDir,
      log,
    });
  }
  return { ...built, kwok, etcd };
}

/**
 * `go build` of one of k8s.io/kubernetes' commands in the wrapper module, stamped with the release
 * (unstamped, it reports v0.0.0-master, which kubectl refuses to parse); written under a temporary
 * name and renamed, so that a build cut short leaves nothing that looks built.
 */
async function buildProgram(program: Program, out: string, log: (line: string) => void): Promise<void> {
  const what = `${program} ${KUBERNETES_VERSION}`;
  mkdirSync(dirname(out), { recursive: true });
  log(`building ${what} from k8s.io/kubernetes (scripts/services/kubernetes-build) into ${dirname(out)}`);
  const [major, minor] = KUBERNETES_VERSION.slice(1).split('.');
  const stamps = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]);
  const started = Date.now();
  const progress = new GoBuildProgress(started);
  const report = progressLines(what, log);
  const partial = `${out}.partial`;
  const args = ['build', '-v', '-trimpath', '-ldflags', ['-s -w', ...stamps].join(' ')];
  const child = spawn('go', [...args, '-o', partial, `k8s.io/kubernetes/cmd/${program}`], {
    cwd: BUILD_MODULE,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  createInterface({ input: child.stderr }).on('line', (line) => progress.line(line));
  const ticker = setInterval(() => report(progress.status(Date.now())), 1_000);
  try {
    const code = await new Promise<number | null>((done, fail) => {
      child.once('error', fail);
      child.once('close', done);
    });
    if (code !== 0) {
      throw new Error(`go build of ${what} failed (${code}): ${progress.messages().join('\n')}`);
    }
  } finally {
    clearInterval(ticker);
  }
  renameSync(partial, out);
  log(`built ${what} in ${formatElapsed(Date.now() - started)}`);
}

async function onPath(program: string): Promise<string | null> {
  try {
    return (await exec('sh', ['-c', `command -v ${program}`])).stdout.trim() || null;
  } catch {
    return null;
  }
}

export interface KubernetesTaint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** A node kwok plays the kubelet of. */
export interface KubernetesNodeSpec {
  name: string;
  /** Beside kubernetes.io/hostname (the name), kubernetes.io/os and kubernetes.io/arch. */
  labels?: Record<string, string>;
  taints?: KubernetesTaint[];
  /** What the node offers (`nvidia.com/gpu: '8'`), as both capacity and allocatable; kwok's 1k CPUs, 1 Ti and 1M pods otherwise. */
  allocatable?: Record<string, string>;
}

export interface KubernetesOptions {
  /** DRYDOCK_HOME: the binaries are built under it, the cluster's state goes under `<home>/kubernetes/<pid>-<id>/`. */
  home: string;
  nodes: KubernetesNodeSpec[];
  /** How long the cluster (and a restarted kube-apiserver) has to be ready; 120 s. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface KubernetesCluster {
  /** The state dir: pki/, etcd/, log/<program>.log, the kubeconfig. */
  dir: string;
  /** An admin kubeconfig (a client certificate in system:masters), everything embedded. */
  kubeconfig: string;
  env: { KUBECONFIG: string };
  /** kube-apiserver's URL. */
  server: string;
  nodes: string[];
  /** The built kubectl, for a shell that runs it as an operator would (with `env`). */
  kubectlPath: string;
  /** Runs the built kubectl with `env`, `input` on its stdin; its stdout, or an error with its stderr. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** Kills kube-apiserver (SIGKILL), runs `whileDown`, starts it again on the same port and etcd; resolves once /readyz is ok. */
  restartApiserver(whileDown?: () => Promise<void>): Promise<void>;
  /** Resident memory of each process, in bytes, as /proc says now. */
  memory(): Record<string, number>;
  /** Stops every process and removes `dir`. */
  stop(): Promise<void>;
}

/**
 * A Kubernetes cluster on this host for one test file or one run: Debian's etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler (built by `ensureKubernetes`) and kwok playing the
 * kubelets of `nodes` (kwok's default stages: pods become Running, deleted pods go away), each a
 * child of this process on free loopback ports, with certificates and a kubeconfig written under
 * `<home>/kubernetes/`. Resolves once every node is Ready and schedulable and the default
 * namespace's service account exists (pods can be created); logs how long that took.
 */
export async function startKubernetes(options: KubernetesOptions): Promise<KubernetesCluster> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (options.nodes.length === 0) throw new Error('a Kubernetes cluster needs at least one node');
  const bin = await ensureKubernetes(options.home, log);
  const started = Date.now();
  await sweepAbandoned(resolve(options.home, 'kubernetes'));

  const dir = resolve(options.home, 'kubernetes', `${process.pid}-${randomBytes(3).toString('hex')}`);
  for (const sub of ['pki', 'etcd', 'log']) mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
  const pki = await writePki(join(dir, 'pki'));
  const ports = { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort() };
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml(server, pki), { mode: 0o600 });
  const kwokConfig = join(dir, 'kwok.yaml');
  writeFileSync(
    kwokConfig,
    stringify({ apiVersion: 'config.kwok.x-k8s.io/v1alpha1', kind: 'KwokConfiguration' }),
  );

  const api = apiClient(server, pki);
  const running = new Map<string, Daemon>();
  const daemon = (name: string, command: string, args: string[]) =>
    running.set(name, spawnDaemon(command, args, { logFile: join(dir, 'log', `${name}.log`), cwd: dir }));
  const etcdUrl = `http://127.0.0.1:${ports.etcd}`;
  const peerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
  const startApiserver = () =>
    daemon('kube-apiserver', bin['kube-apiserver'], [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--tls-cert-file=${pki.apiserverCert}`,
      `--tls-private-key-file=${pki.apiserverKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--authorization-mode=Node,RBAC',
      '--allow-privileged=true',
      // The `kubernetes` Service's endpoints would name 127.0.0.1, which Endpoints refuse; nothing
      // in a kwok cluster reaches kube-apiserver through that Service.
      '--endpoint-reconciler-type=none',
      // With WatchList (on by default in 1.34) a watch from resourceVersion 0 or none becomes a
      // streaming list, which needs etcd's RequestWatchProgress (3.4.31+, 3.5.13+): on Debian's
      // etcd 3.4.23 kube-apiserver ends such watches at once with an error. kwok's watches are of
      // that kind: they ended every few seconds, and pods were played up to 20 s late.
      '--feature-gates=WatchList=false',
      '--profiling=false',
    ]);

  const until = (what: string, ready: () => Promise<boolean>) =>
    untilReady(what, ready, {
      running,
      timeoutMs,
      context: (exited) => (exited ? logTail(dir, exited) : ''),
    });
  const apiserverReady = () =>
    until('kube-apiserver /readyz', async () => (await api('GET', '/readyz')).status === 200);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const stopping = Date.now();
    const clients = ['kwok', 'kube-scheduler', 'kube-controller-manager'];
    await Promise.all(clients.map((name) => running.get(name)?.stop()));
    await running.get('kube-apiserver')?.stop();
    await running.get('etcd')?.stop();
    running.clear();
    rmSync(dir, { recursive: true, force: true });
    log(`stopped Kubernetes in ${Date.now() - stopping} ms`);
  };

  const names = options.nodes.map((n) => n.name);
  try {
    daemon('etcd', bin.etcd, [
      '--name=drydock',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=drydock=${peerUrl}`,
      '--logger=zap',
      '--log-outputs=stderr',
    ]);
    await until('etcd /health', async () => {
      const answer = await fetch(`${etcdUrl}/health`);
      return answer.ok && ((await answer.json()) as { health?: string }).health === 'true';
    });
    startApiserver();
    await apiserverReady();
    const components = [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--secure-port=0'];
    daemon('kube-controller-manager', bin['kube-controller-manager'], [
      ...components,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--root-ca-file=${pki.caCert}`,
    ]);
    daemon('kube-scheduler', bin['kube-scheduler'], components);
    daemon('kwok', bin.kwok, [
      `--kubeconfig=${kubeconfig}`,
      `--config=${kwokConfig}`,
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      // Node Leases renewed every 10 s, as kubelets do: without them kwok posts a node's status
      // about once a minute, past the node lifecycle controller's 50 s grace on a busy machine,
      // and the node goes NotReady (its pods not Ready, every eviction refused by its budget).
      '--node-lease-duration-seconds=40',
      // Pod IPs are names in pod status only: room for the benchmark's 10,000 pods.
      '--cidr=10.0.0.1/16',
    ]);
    // Created NODES_AT_ONCE at a time: one by one, a benchmark's 1,000 nodes took minutes.
    for (let i = 0; i < options.nodes.length; i += NODES_AT_ONCE) {
      await Promise.all(
        options.nodes.slice(i, i + NODES_AT_ONCE).map((node) =>
          // A busy machine's etcd may time out (500) a create it then makes: 409 is that one, done.
          until(`node ${node.name} created`, async () => {
            const created = await api('POST', '/api/v1/nodes', nodeObject(node));
            if (created.status === 201 || created.status === 409) return true;
            if (created.status >= 500) return false;
            throw new Fatal(`creating node ${node.name}: ${created.status} ${created.body}`);
          }),
        ),
      );
    }
    await until(`every node (${names.join(', ')}) Ready and schedulable`, async () => {
      const { body } = await api('GET', '/api/v1/nodes');
      const nodes = (JSON.parse(body) as { items: NodeView[] }).items;
      return names.every((name) => nodes.some((node) => node.metadata.name === name && isReady(node)));
    });
    // The ServiceAccount admission plugin refuses pods until the controller manager made it.
    await until('the default service account', async () => {
      return (await api('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  log(
    `started etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok ` +
      `(${names.length} nodes) in ${Date.now() - started} ms`,
  );

  const env = { KUBECONFIG: kubeconfig };
  return {
    dir,
    kubeconfig,
    env,
    server,
    nodes: names,
    kubectlPath: bin.kubectl,
    async kubectl(args, input) {
      const running = exec(bin.kubectl, args, {
        env: { ...process.env, ...env },
        cwd: dir,
        timeout: 60_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      running.child.stdin?.end(input ?? '');
      try {
        return (await running).stdout;
      } catch (error) {
        const { stderr, code } = error as { stderr?: string; code?: unknown };
        throw new Error(`kubectl ${args.join(' ')} failed (${String(code)}): ${stderr?.trim() ?? ''}`);
      }
    },
    async restartApiserver(whileDown) {
      const restarting = Date.now();
      // Killed: stopped with SIGTERM, it would wait about 70 s for its watches to drain.
      const apiserver = running.get('kube-apiserver')!;
      apiserver.child.kill('SIGKILL');
      await apiserver.exited;
      try {
        await whileDown?.();
      } finally {
        // Back whatever whileDown found: the cluster stays usable for what comes after.
        startApiserver();
        await apiserverReady();
      }
      log(`restarted kube-apiserver in ${Date.now() - restarting} ms`);
    },
    memory() {
      return Object.fromEntries(
        [...running].map(([name, service]) => [name, residentBytes(service.child.pid)]),
      );
    },
    stop,
  };
}

interface NodeView {
  metadata: { name: string };
  spec: { taints?: KubernetesTaint[] };
  status: { conditions?: { type: string; status: string }[] };
}

/**
 * Ready, and without the not-ready taint the node lifecycle controller puts on a new node until it
 * has seen it Ready (until then the scheduler passes it by).
 */
const isReady = (node: NodeView) =>
  node.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true &&
  !node.spec.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready');

function nodeObject(node: KubernetesNodeSpec): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: {
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        ...node.labels,
      },
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
    },
    spec: { taints: node.taints ?? [] },
    // A node's status may be given when it is created; kwok keeps what it finds here.
    ...(node.allocatable ? { status: { capacity: node.allocatable, allocatable: node.allocatable } } : {}),
  };
}

interface Pki {
  caCert: string;
  caPem: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCertPem: string;
  adminKeyPem: string;
  serviceAccountKey: string;
}

/**
 * A CA, kube-apiserver's serving certificate (127.0.0.1, localhost), an admin client certificate
 * (group system:masters) and the key service-account tokens are signed with (pki.ts).
 */
async function writePki(dir: string): Promise<Pki> {
  const ca = await issueCertificate(dir, 'ca', '/CN=drydock-kubernetes-ca');
  const apiserver = await issueCertificate(dir, 'apiserver', '/CN=kube-apiserver', {
    ca,
    extensions: [
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc',
      'extendedKeyUsage=serverAuth',
    ],
  });
  const admin = await issueCertificate(dir, 'admin', '/O=system:masters/CN=drydock-admin', {
    ca,
    extensions: ['extendedKeyUsage=clientAuth'],
  });
  return {
    caCert: ca.certFile,
    caPem: readFileSync(ca.certFile, 'utf8'),
    apiserverCert: apiserver.certFile,
    apiserverKey: apiserver.keyFile,
    adminCertPem: readFileSync(admin.certFile, 'utf8'),
    adminKeyPem: readFileSync(admin.keyFile, 'utf8'),
    serviceAccountKey: writeKey(dir, 'service-account', 'rsa'),
  };
}

function kubeconfigYaml(server: string, pki: Pki): string {
  const base64 = (pem: string) => Buffer.from(pem).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'drydock-test', cluster: { server, 'certificate-authority-data': base64(pki.caPem) } },
    ],
    users: [
      {
        name: 'drydock-admin',
        user: {
          'client-certificate-data': base64(pki.adminCertPem),
          'client-key-data': base64(pki.adminKeyPem),
        },
      },
    ],
    contexts: [{ name: 'drydock-test', context: { cluster: 'drydock-test', user: 'drydock-admin' } }],
    'current-context': 'drydock-test',
  });
}

/** The harness's own requests to kube-apiserver, as the admin. */
function apiClient(server: string, pki: Pki) {
  return (method: string, path: string, body?: object) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request(
        `${server}${path}`,
        {
          method,
          ca: pki.caPem,
          cert: pki.adminCertPem,
          key: pki.adminKeyPem,
          headers: body ? { 'content-type': 'application/json' } : {},
          timeout: 10_000,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', fail);
      req.end(body ? JSON.stringify(body) : undefined);
    });
}

function residentBytes(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The end of a process's log, for an error's words. */
function logTail(dir: string, name: string): string {
  const file = join(dir, 'log', `${name}.log`);
  if (!existsSync(file)) return '';
  return `\n${name}.log ends:\n${readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15).join('\n')}`;
}

// `tsx scripts/services/kubernetes.ts` (.ci/run): builds what is missing, each build's time on its own line.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await ensureKubernetes(resolve('.drydock'), (line) => process.stdout.write(`${line}\n`));
}
