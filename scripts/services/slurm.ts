import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Fatal, spawnDaemon, sweepAbandoned, untilReady, type Daemon } from './daemons';
import { freePort } from './process';

const exec = promisify(execFile);

/** A generic resource of a node (`gpu`, `gpu:h100`), backed by no real device. */
export interface SlurmGres {
  name: string;
  type?: string;
  count: number;
}

/** One Slurm node: a slurmd of its own on this host (NodeHostname=localhost), on a port of its own. */
export interface SlurmNodeSpec {
  name: string;
  cpus: number;
  /** MB (RealMemory); 1024 unless given. */
  realMemory?: number;
  gres?: SlurmGres[];
}

export interface SlurmOptions {
  /** DRYDOCK_HOME: the cluster's state goes under `<home>/slurm/<owner pid>-<id>/`. */
  home: string;
  clusterName: string;
  nodes: SlurmNodeSpec[];
  /** The one partition, holding every node, the default one; `batch` unless given. */
  partition?: string;
  /** Absolute paths of programs slurmctld runs at each job's end / start (as root, with SLURM_JOB_ID, …). */
  epilogSlurmctld?: string;
  prologSlurmctld?: string;
  /** More slurm.conf lines (`SlurmdTimeout=10`, …), written after the harness's settings and before the nodes. */
  extraConfig?: string[];
  /** How long the daemons have to start (and a restarted slurmctld to see every node again); 60 s. */
  timeoutMs?: number;
  log?: (line: string) => void;
}

/** The Slurm clients a test runs against the cluster. */
export type SlurmCommand = 'sbatch' | 'scancel' | 'scontrol' | 'sinfo' | 'squeue';

/** A node as `sinfo --json` (data parser v0.0.38, Slurm 22.05) gives it: the fields the harness reads. */
export interface SlurmNodeView {
  name: string;
  /** The base state, lower case: `idle`, `allocated`, `mixed`, `down`, `unknown`, … */
  state: string;
  /** `DRAIN`, `NOT_RESPONDING`, `COMPLETING`, …: `allocated` + DRAIN is what `sinfo` calls draining. */
  state_flags: string[];
  reason: string;
}

export interface SlurmCluster {
  clusterName: string;
  partition: string;
  nodes: string[];
  /** The state dir: slurm.conf, the MUNGE key and socket, state, spools, logs; jobs run in it. */
  dir: string;
  /** What a Slurm client needs: slurm.conf names the MUNGE socket (AuthInfo=socket=…). */
  env: { SLURM_CONF: string };
  /** Runs a Slurm client with `env`, in `dir`; its stdout, or an error with its stderr when it fails. */
  slurm(command: SlurmCommand, args?: string[]): Promise<string>;
  /** `<command> --json <args>`, parsed; an error when its `errors` are not empty (it exits 0 with them). */
  slurmJson<T>(command: 'squeue' | 'sinfo', args?: string[]): Promise<T>;
  /** Every node as `sinfo --json` says. */
  nodeStates(): Promise<SlurmNodeView[]>;
  /**
   * Stops slurmctld (SIGTERM: it saves its state), runs `whileDown` when given, and starts it again
   * on the same state; resolves once every node has registered with it again (until then an idle
   * node reads `unknown`, a drained idle one `unknown` + DRAIN).
   */
  restartSlurmctld(whileDown?: () => Promise<void>): Promise<void>;
  /** Cancels every job, stops the daemons, kills what they left (job steps) and removes `dir`. */
  stop(): Promise<void>;
}

const POLL_MS = 100;

/**
 * A Slurm cluster on this host for one test file or one run: munged with a key and socket of its
 * own, slurmctld and one slurmd per node (`slurmd -N <name>`, every node on localhost, each on a
 * free port), all in the foreground as children of this process, from a slurm.conf written under
 * `<home>/slurm/`. Resolves once `sinfo` shows every node idle; logs how long that took.
 */
export async function startSlurm(options: SlurmOptions): Promise<SlurmCluster> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = Date.now();
  await requireSlurm();
  // Their daemons died with their owner (setpriv --pdeathsig), but job steps outlive slurmd by design.
  await sweepAbandoned(resolve(options.home, 'slurm'), (dir) => killProcessesIn(realpathSync(dir)));
  for (const path of [options.epilogSlurmctld, options.prologSlurmctld]) {
    if (path !== undefined && !isAbsolute(path))
      throw new Error(`slurmctld runs only absolute paths: ${path}`);
  }
  if (options.nodes.length === 0) throw new Error('a Slurm cluster needs at least one node');

  const home = resolve(options.home, 'slurm', `${process.pid}-${randomBytes(3).toString('hex')}`);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  // As /proc/<pid>/cwd names it, for the sweep of what runs in it.
  const dir = realpathSync(home);
  const partition = options.partition ?? 'batch';
  const conf = join(dir, 'slurm.conf');
  const mungeSocket = join(dir, 'munge', 'munge.socket');
  for (const sub of ['munge', 'state', 'log', ...options.nodes.map((n) => join('spool', n.name))]) {
    mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
  }
  writeFileSync(join(dir, 'munge', 'munge.key'), randomBytes(1024), { mode: 0o400 });
  const ports = { slurmctld: await freePort(), slurmd: await freePort() };
  const nodePorts = new Map<string, number>();
  for (const node of options.nodes) nodePorts.set(node.name, await freePort());
  writeFileSync(
    conf,
    slurmConf({ ...options, partition, dir, mungeSocket, ports, nodePorts }).join('\n') + '\n',
  );
  writeGres(dir, options.nodes);

  const env = { SLURM_CONF: conf };
  const daemonEnv = { ...process.env, ...env };
  const daemon = (command: string, args: string[]) =>
    spawnDaemon(command, args, { env: daemonEnv, cwd: dir });
  const running = new Map<string, Daemon>();
  const startSlurmctld = () => running.set('slurmctld', daemon('slurmctld', ['-D', '-f', conf]));

  const slurm = async (command: SlurmCommand, args: string[] = []) => {
    try {
      const { stdout } = await exec(command, args, {
        env: daemonEnv,
        cwd: dir,
        timeout: 30_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    } catch (error) {
      const { stderr, code } = error as { stderr?: string; code?: unknown };
      throw new Error(`${command} ${args.join(' ')} failed (${String(code)}): ${stderr?.trim() ?? ''}`);
    }
  };
  const slurmJson = async <T>(command: 'squeue' | 'sinfo', args: string[] = []) => {
    const answer = JSON.parse(await slurm(command, ['--json', ...args])) as T & { errors?: unknown[] };
    // Exit 0 with an empty list and the reason in `errors` is how they say the controller is away.
    if (answer.errors?.length) throw new Error(`${command} --json: ${JSON.stringify(answer.errors)}`);
    return answer;
  };
  const nodeStates = async () => (await slurmJson<{ nodes: SlurmNodeView[] }>('sinfo')).nodes;

  const until = (what: string, ready: () => Promise<boolean>) =>
    untilReady(what, ready, { running, timeoutMs, context: () => logTail(dir) });
  const names = options.nodes.map((n) => n.name);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const stopping = Date.now();
    const slurmctld = running.get('slurmctld');
    await cancelEveryJob(slurm, slurmctld?.child.exitCode === null && slurmctld.child.signalCode === null);
    const slurmds = [...running].filter(([name]) => name.startsWith('slurmd'));
    await Promise.all(slurmds.map(([, service]) => service.stop()));
    await running.get('slurmctld')?.stop();
    await running.get('munged')?.stop();
    running.clear();
    // Job steps (slurmstepd and what it runs) outlive their slurmd by design: they run in `dir`.
    await killProcessesIn(dir);
    rmSync(dir, { recursive: true, force: true });
    log(`stopped Slurm (cluster ${options.clusterName}) in ${Date.now() - stopping} ms`);
  };

  try {
    running.set(
      'munged',
      daemon('munged', [
        '--foreground',
        '--force',
        `--key-file=${join(dir, 'munge', 'munge.key')}`,
        `--socket=${mungeSocket}`,
        `--pid-file=${join(dir, 'munge', 'munged.pid')}`,
        `--seed-file=${join(dir, 'munge', 'munged.seed')}`,
        `--log-file=${join(dir, 'log', 'munged.log')}`,
      ]),
    );
    await until('munged to listen', async () => existsSync(mungeSocket));
    startSlurmctld();
    for (const name of names) running.set(`slurmd ${name}`, daemon('slurmd', ['-D', '-N', name, '-f', conf]));
    await until(`every node (${names.join(', ')}) idle in sinfo`, async () => {
      const nodes = await nodeStates();
      // slurmctld refused a node's registration (its gres, CPUs, …): no wait ends that.
      const refused = nodes.find((node) => node.reason !== '');
      if (refused) throw new Fatal(`slurmctld set ${refused.name} ${refused.state} (${refused.reason})`);
      return names.every((name) => nodes.some((node) => node.name === name && isIdle(node)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  log(
    `started munged, slurmctld and ${names.length} slurmd (cluster ${options.clusterName}) in ${Date.now() - started} ms`,
  );

  return {
    clusterName: options.clusterName,
    partition,
    nodes: names,
    dir,
    env,
    slurm,
    slurmJson,
    nodeStates,
    async restartSlurmctld(whileDown) {
      const restarting = Date.now();
      await running.get('slurmctld')?.stop();
      await whileDown?.();
      startSlurmctld();
      await until('every node registered with the restarted slurmctld', async () => {
        const nodes = await nodeStates();
        return names.every((name) => nodes.some((node) => node.name === name && hasRegistered(node)));
      });
      log(`restarted slurmctld in ${Date.now() - restarting} ms`);
    },
    stop,
  };
}

const isIdle = (node: SlurmNodeView) => node.state === 'idle' && node.state_flags.length === 0;
const hasRegistered = (node: SlurmNodeView) =>
  node.state !== 'unknown' && !node.state_flags.includes('NOT_RESPONDING');

function slurmConf(o: {
  clusterName: string;
  partition: string;
  dir: string;
  mungeSocket: string;
  ports: { slurmctld: number; slurmd: number };
  nodePorts: Map<string, number>;
  nodes: SlurmNodeSpec[];
  epilogSlurmctld?: string;
  prologSlurmctld?: string;
  extraConfig?: string[];
}): string[] {
  const gresTypes = [...new Set(o.nodes.flatMap((n) => (n.gres ?? []).map((g) => g.name)))];
  return [
    `ClusterName=${o.clusterName}`,
    'SlurmctldHost=localhost',
    `SlurmctldPort=${o.ports.slurmctld}`,
    // Each node names its own Port; this is only the default.
    `SlurmdPort=${o.ports.slurmd}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    'AuthType=auth/munge',
    'CredType=cred/munge',
    // Clients and daemons alike find this cluster's munged here, not at /run/munge.
    `AuthInfo=socket=${o.mungeSocket}`,
    `StateSaveLocation=${join(o.dir, 'state')}`,
    `SlurmdSpoolDir=${join(o.dir, 'spool', '%n')}`,
    `SlurmctldPidFile=${join(o.dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(o.dir, 'slurmd-%n.pid')}`,
    `SlurmctldLogFile=${join(o.dir, 'log', 'slurmctld.log')}`,
    `SlurmdLogFile=${join(o.dir, 'log', 'slurmd-%n.log')}`,
    // No systemd and no cgroup hierarchy to delegate here: processes are tracked through /proc.
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_CPU',
    // The nodes report what slurm.conf says (CPUs, memory), not this host's hardware.
    'SlurmdParameters=config_overrides',
    // A node Slurm set DOWN for not responding comes back once its slurmd registers again; one an
    // administrator set DOWN stays so until RESUME (with 2, any registration — a ping's answer to a
    // DOWN node — lifted it within seconds, before a bridge's sweep could see it).
    'ReturnToService=1',
    // Batch jobs are requeueable unless submitted with --no-requeue.
    'JobRequeue=1',
    'SchedulerType=sched/backfill',
    // A batch job is scheduled on the next pass (about 1 s here), not up to 3 s later (the default).
    'SchedulerParameters=batch_sched_delay=0,bf_interval=1',
    'MpiDefault=none',
    'MailProg=/bin/true',
    'AccountingStorageType=accounting_storage/none',
    'JobAcctGatherType=jobacct_gather/none',
    'JobCompType=jobcomp/none',
    ...(gresTypes.length > 0 ? [`GresTypes=${gresTypes.join(',')}`] : []),
    ...(o.epilogSlurmctld ? [`EpilogSlurmctld=${o.epilogSlurmctld}`] : []),
    ...(o.prologSlurmctld ? [`PrologSlurmctld=${o.prologSlurmctld}`] : []),
    ...(o.extraConfig ?? []),
    ...o.nodes.map((n) =>
      [
        `NodeName=${n.name}`,
        'NodeHostname=localhost',
        'NodeAddr=localhost',
        `Port=${o.nodePorts.get(n.name)}`,
        `CPUs=${n.cpus}`,
        `RealMemory=${n.realMemory ?? 1024}`,
        ...(n.gres?.length ? [`Gres=${n.gres.map(gresName).join(',')}`] : []),
        'State=UNKNOWN',
      ].join(' '),
    ),
    `PartitionName=${o.partition} Nodes=${o.nodes.map((n) => n.name).join(',')} Default=YES MaxTime=INFINITE State=UP`,
  ];
}

const gresName = (g: SlurmGres) => [g.name, ...(g.type ? [g.type] : []), String(g.count)].join(':');

/**
 * gres.conf, and the device files it names: 22.05 drops a GPU that names no File, and wants a
 * character device there — each is a symlink to /dev/null under `<dir>/dev/<node>/`.
 */
function writeGres(dir: string, nodes: SlurmNodeSpec[]): void {
  const lines: string[] = [];
  for (const node of nodes) {
    for (const g of node.gres ?? []) {
      const devices = join(dir, 'dev', node.name);
      const prefix = `${g.name}${g.type ? `-${g.type}` : ''}`;
      mkdirSync(devices, { recursive: true });
      for (let i = 0; i < g.count; i++) symlinkSync('/dev/null', join(devices, `${prefix}${i}`));
      const files = g.count === 1 ? `${prefix}0` : `${prefix}[0-${g.count - 1}]`;
      lines.push(
        `NodeName=${node.name} Name=${g.name}${g.type ? ` Type=${g.type}` : ''} File=${join(devices, files)}`,
      );
    }
  }
  if (lines.length > 0) writeFileSync(join(dir, 'gres.conf'), lines.join('\n') + '\n');
}

async function requireSlurm(): Promise<void> {
  const missing: string[] = [];
  for (const program of ['munged', 'slurmctld', 'slurmd', 'sinfo', 'sbatch']) {
    try {
      await exec('sh', ['-c', `command -v ${program}`]);
    } catch {
      missing.push(program);
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `Slurm is not installed (no ${missing.join(', ')} on PATH): apt-get install slurm-wlm munge (.ci/run does)`,
    );
  }
}

/** Cancels every job the cluster still runs or queues, and waits (10 s at most) until none runs. */
async function cancelEveryJob(
  slurm: (command: SlurmCommand, args?: string[]) => Promise<string>,
  controllerUp: boolean,
): Promise<void> {
  if (!controllerUp) return;
  try {
    const ids = (await slurm('squeue', ['--noheader', '--format=%i'])).split(/\s+/).filter(Boolean);
    if (ids.length === 0) return;
    await slurm('scancel', ids);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const active = await slurm('squeue', ['--noheader', '--format=%i', '--states=R,CG,CF,S,SI,SO,ST']);
      if (active.trim() === '') return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } catch {
    // The controller is gone: what its jobs left running is killed by killProcessesIn.
  }
}

/** SIGKILLs every process (but this one) whose working directory is in `dir`, and waits until they are gone. */
async function killProcessesIn(dir: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = processesIn(dir);
    if (pids.length === 0 || Date.now() > deadline) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(entry));
    } catch {
      // gone, a zombie, or not ours to read
    }
  }
  return pids;
}

/** The end of slurmctld's log, for an error's words. */
function logTail(dir: string): string {
  const file = join(dir, 'log', 'slurmctld.log');
  if (!existsSync(file)) return '';
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15);
  return `\nslurmctld.log ends:\n${lines.join('\n')}`;
}
