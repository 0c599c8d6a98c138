import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Teardown } from './teardown';

/**
 * The real worker (`createWorker` from worker.ts) in a child process (bench/support/
 * worker-process-main.ts, run through tsx), as production runs it beside the API: its own event
 * loop, its own pool, its own memory, which a benchmark can read from /proc.
 */
export interface WorkerProcessConfig {
  databaseUrl: string;
  temporalAddress: string;
  taskQueue: string;
  /** Also runs bench/workflows/baseline.ts on this queue, in the same process (a same-run baseline). */
  baselineTaskQueue?: string;
}

export type WorkerProcessRequest = { id: number; type: 'stats' } | { id: number; type: 'stop' };

export type WorkerProcessReply =
  | { type: 'ready'; pid: number }
  | { id: number; type: 'stats'; cpu: NodeJS.CpuUsage; maxCachedWorkflows: number }
  | { id: number; type: 'ok' }
  | { id: number; type: 'error'; message: string };

const entry = fileURLToPath(new URL('./worker-process-main.ts', import.meta.url));

export interface WorkerProcess {
  pid: number;
  /** CPU time of the whole process so far, and the cache size the worker runs with. */
  stats(): Promise<{ cpu: NodeJS.CpuUsage; maxCachedWorkflows: number }>;
  /** The process' resident memory now, in bytes (VmRSS of /proc/<pid>/status). */
  rss(): number;
}

/** Starts the worker child and waits until its workers run; it is stopped at teardown. */
export async function startWorkerProcess(
  config: WorkerProcessConfig,
  teardown: Teardown,
): Promise<WorkerProcess> {
  // BENCH_WORKER_CPU_PROFILE=<dir>: the worker's threads write V8 CPU profiles there when it stops
  // (summarize them with bench/support/cpu-profile.ts); Node refuses --cpu-prof in NODE_OPTIONS.
  const profileDir = process.env.BENCH_WORKER_CPU_PROFILE;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, '--import', 'tsx', entry], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_WORKER_CONFIG: JSON.stringify(config) },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let nextId = 1;
  const pending = new Map<number, (reply: WorkerProcessReply) => void>();
  const ready = new Promise<{ pid: number }>((resolve, reject) => {
    child.on('message', (reply: WorkerProcessReply) => {
      if (reply.type === 'ready') resolve(reply);
      else pending.get(reply.id)?.(reply);
    });
    void exited.then((code) =>
      reject(new Error(`the worker process exited with ${code} before it was ready`)),
    );
  });
  const ask = (type: WorkerProcessRequest['type']): Promise<WorkerProcessReply> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, (reply) => {
        pending.delete(id);
        if (reply.type === 'error') reject(new Error(`worker process: ${reply.message}`));
        else resolve(reply);
      });
      child.send({ id, type } satisfies WorkerProcessRequest);
    });
  };
  teardown.add('stop the worker process', async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    try {
      await Promise.race([ask('stop'), exited]);
    } catch {
      child.kill('SIGTERM');
    }
    await exited;
    clearTimeout(timer);
  });

  const { pid } = await ready;
  return {
    pid,
    async stats() {
      const reply = await ask('stats');
      if (reply.type !== 'stats') throw new Error(`worker process: unexpected reply ${reply.type}`);
      return { cpu: reply.cpu, maxCachedWorkflows: reply.maxCachedWorkflows };
    },
    rss: () => residentBytes(pid),
  };
}

/** VmRSS of a live process, in bytes. */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** CPU time (user + system) of a live process so far, in ms, from /proc/<pid>/stat (100 ticks a second). */
export function processCpuMs(pid: number): number {
  // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The pid of the Temporal dev server this host runs on `port` (`temporal server start-dev`), if any. */
export function devServerPid(port: number): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const at = args.indexOf('--port');
    if (args.includes('start-dev') && at >= 0 && args[at + 1] === String(port)) return Number(entry);
  }
  return null;
}
