import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type postgres from 'postgres';

/**
 * CPU time by process, read from /proc (Linux), so a benchmark can say who used the machine's
 * cores during a window: itself, a child it started, Postgres, and everything else on the host.
 * Where /proc is missing or a process is not ours to see, the figure is null, never a guess.
 */

/** Clock ticks per second of /proc's times (USER_HZ): 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  /** utime and stime, seconds: the process and all its threads. */
  user: number;
  system: number;
  /** cutime + cstime, seconds: children it has waited for (a postmaster's exited backends). */
  reaped: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name is in parentheses and may hold spaces: the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const tick = (i: number) => Number(fields[i]) / TICKS_PER_SECOND;
  return { ppid: Number(fields[1]), user: tick(11), system: tick(12), reaped: tick(13) + tick(14) };
}

/** A process' CPU seconds so far, split, and its main thread's context switches. */
export interface ProcessSample {
  user: number;
  system: number;
  /** Main thread only: waits it chose (voluntary) and preemptions (involuntary). */
  voluntarySwitches: number | null;
  involuntarySwitches: number | null;
}

export function processSample(pid: number | undefined): ProcessSample | null {
  if (pid === undefined) return null;
  const stat = readStat(pid);
  if (!stat) return null;
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // gone between the two reads
  }
  const count = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(status);
    return match ? Number(match[1]) : null;
  };
  return {
    user: stat.user,
    system: stat.system,
    voluntarySwitches: count('voluntary_ctxt_switches'),
    involuntarySwitches: count('nonvoluntary_ctxt_switches'),
  };
}

/**
 * CPU seconds of a Postgres server so far: the postmaster, every live child (backends, walwriter,
 * checkpointer...), and the children it has reaped, so backends that came and went (pgbench's
 * connections) still count once they exit.
 */
export function postgresCpuSeconds(postmasterPid: number | null): number | null {
  if (postmasterPid === null) return null;
  const postmaster = readStat(postmasterPid);
  if (!postmaster) return null;
  let total = postmaster.user + postmaster.system + postmaster.reaped;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === postmasterPid) continue;
    const stat = readStat(pid);
    if (stat?.ppid === postmasterPid) total += stat.user + stat.system;
  }
  return total;
}

/**
 * CPU seconds so far of every process below `root` (not `root` itself), the children they reaped
 * included: all the services a benchmark started as its children (bench prod-shape).
 */
export function descendantsCpuSeconds(root: number): number {
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  const below = (pid: number): boolean => {
    const parent = stats.get(pid)?.ppid;
    return parent === root || (parent !== undefined && parent > 1 && below(parent));
  };
  let total = 0;
  for (const [pid, stat] of stats) if (below(pid)) total += stat.user + stat.system + stat.reaped;
  return total;
}

/** The parent of a process (a backend's parent is its postmaster), or null. */
export function parentPid(pid: number): number | null {
  return readStat(pid)?.ppid ?? null;
}

/** Busy and total ticks of the whole machine so far, from /proc/stat's first line. */
function machineTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
    return { busy, total: busy + idle! + (iowait ?? 0) };
  } catch {
    return null;
  }
}

/** One reading of every clock a window is measured with. */
export interface CpuMark {
  wallMs: number;
  self: NodeJS.CpuUsage;
  machine: { busy: number; total: number } | null;
  processes: Record<string, ProcessSample | null>;
  postgres: number | null;
}

/** Reads the clocks now: this process, the named processes, Postgres, the machine. */
export function cpuMark(
  processes: Record<string, number | undefined>,
  postmasterPid: number | null,
): CpuMark {
  return {
    wallMs: performance.now(),
    self: process.cpuUsage(),
    machine: machineTicks(),
    processes: Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, processSample(pid)])),
    postgres: postgresCpuSeconds(postmasterPid),
  };
}

/**
 * Cores each party used between two marks (CPU seconds over wall seconds): `self` is this process,
 * then the named processes, Postgres, the whole machine, and `other` for what is left of the
 * machine's busy time (the Temporal server, other people's work on a shared host).
 */
export interface CpuSplit {
  seconds: number;
  cores: Record<string, number | null>;
  /** The named processes: user and system cores, main-thread context switches per second. */
  processes: Record<string, ProcessRates | null>;
}

export interface ProcessRates {
  userCores: number;
  systemCores: number;
  voluntarySwitchesPerSecond: number | null;
  involuntarySwitchesPerSecond: number | null;
}

export function cpuBetween(a: CpuMark, b: CpuMark, selfName = 'self'): CpuSplit {
  const seconds = (b.wallMs - a.wallMs) / 1000;
  const per = (x: number | null, y: number | null) => (x === null || y === null ? null : (y - x) / seconds);
  const self = (b.self.user + b.self.system - a.self.user - a.self.system) / 1e6 / seconds;
  const cores: Record<string, number | null> = { [selfName]: self };
  const processes: CpuSplit['processes'] = {};
  for (const name of Object.keys(b.processes)) {
    const x = a.processes[name] ?? null;
    const y = b.processes[name] ?? null;
    if (!x || !y) {
      cores[name] = null;
      processes[name] = null;
      continue;
    }
    cores[name] = per(x.user + x.system, y.user + y.system);
    const rate = (p: number | null, q: number | null) =>
      p === null || q === null ? null : Math.round((q - p) / seconds);
    processes[name] = {
      userCores: round2(per(x.user, y.user)!),
      systemCores: round2(per(x.system, y.system)!),
      voluntarySwitchesPerSecond: rate(x.voluntarySwitches, y.voluntarySwitches),
      involuntarySwitchesPerSecond: rate(x.involuntarySwitches, y.involuntarySwitches),
    };
  }
  cores.postgres = per(a.postgres, b.postgres);
  let machine: number | null = null;
  if (a.machine && b.machine && b.machine.total > a.machine.total) {
    machine = ((b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total)) * cpus().length;
  }
  cores.machine = machine;
  const known = Object.entries(cores)
    .filter(([name]) => name !== 'machine')
    .reduce((sum, [, v]) => sum + (v ?? 0), 0);
  cores.other = machine === null ? null : Math.max(0, machine - known);
  for (const [name, v] of Object.entries(cores)) cores[name] = v === null ? null : round2(v);
  return { seconds: round2(seconds), cores, processes };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The postmaster of the server behind `sql`, when its processes are visible from here. */
export async function findPostmaster(sql: postgres.Sql): Promise<number | null> {
  const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const postmaster = parentPid(row!.pid);
  if (postmaster === null) return null;
  try {
    return readFileSync(`/proc/${postmaster}/comm`, 'utf8').trim().startsWith('postgres') ? postmaster : null;
  } catch {
    return null;
  }
}
