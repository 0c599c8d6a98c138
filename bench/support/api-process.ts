import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { EventLoopUtilization } from 'node:perf_hooks';
import type { Teardown } from './teardown';

/**
 * The real API in a child process (bench/support/api-process-main.ts, run through tsx), so the
 * benchmark's load generator and the API each get an event loop, and each a line in the CPU split.
 */
export interface ApiProcessConfig {
  databaseUrl: string;
  /** None: a Temporal client that never connects (a benchmark of routes that do not use it). */
  temporalAddress?: string;
  taskQueue: string;
  bootstrapKeyHash: string;
  /** Size of the API's Postgres pool. */
  connections: number;
  /** The heartbeat flush interval (default: production's 15 s). */
  heartbeatFlushEveryMs?: number;
}

/** One heartbeat flush the API made: when it ended (epoch ms), how many nodes, how long. */
export interface ApiFlush {
  at: number;
  rows: number;
  durationMs: number;
}

export type ApiProcessRequest =
  | { id: number; type: 'stats' }
  | { id: number; type: 'profile-start'; intervalUs: number }
  | { id: number; type: 'profile-stop'; path: string }
  | { id: number; type: 'flush' }
  | { id: number; type: 'flushes' }
  | { id: number; type: 'stop' };

/** A request before it is numbered (Omit over each member of the union). */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

export type ApiProcessReply =
  | { type: 'listening'; port: number; pid: number }
  | { id: number; type: 'stats'; eventLoop: EventLoopUtilization; cpu: NodeJS.CpuUsage }
  | { id: number; type: 'flushes'; flushes: ApiFlush[] }
  | { id: number; type: 'ok' }
  | { id: number; type: 'error'; message: string };

const entry = fileURLToPath(new URL('./api-process-main.ts', import.meta.url));

export interface ApiProcess {
  port: number;
  pid: number;
  /** The child's event-loop utilization so far (diff two with performance.eventLoopUtilization). */
  eventLoop(): Promise<EventLoopUtilization>;
  /** The child's CPU time so far (diff two with the same fields). */
  cpu(): Promise<NodeJS.CpuUsage>;
  /** Starts a V8 CPU profile in the child, sampling every `intervalUs`. */
  profileStart(intervalUs?: number): Promise<void>;
  /** Stops it and has the child write the .cpuprofile to `path`. */
  profileStop(path: string): Promise<void>;
  /** Flushes the pending heartbeat last-seen times now. */
  flushHeartbeats(): Promise<void>;
  /** Every heartbeat flush that wrote so far, the timer's and `flushHeartbeats`'. */
  flushes(): Promise<ApiFlush[]>;
}

/** Starts the API child and waits until it listens; it is stopped at teardown. */
export async function startApiProcess(config: ApiProcessConfig, teardown: Teardown): Promise<ApiProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', entry], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_API_CONFIG: JSON.stringify(config) },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  teardown.add('stop the API process', async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      await Promise.race([ask({ type: 'stop' }), exited]);
    } catch {
      child.kill('SIGTERM');
    }
    await exited;
    clearTimeout(timer);
  });

  let nextId = 1;
  const pending = new Map<number, (reply: ApiProcessReply) => void>();
  const listening = new Promise<{ port: number; pid: number }>((resolve, reject) => {
    child.on('message', (reply: ApiProcessReply) => {
      if (reply.type === 'listening') resolve(reply);
      else pending.get(reply.id)?.(reply);
    });
    void exited.then((code) => reject(new Error(`the API process exited with ${code} before listening`)));
  });
  function ask(request: Unnumbered<ApiProcessRequest>): Promise<ApiProcessReply> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, (reply) => {
        pending.delete(id);
        if (reply.type === 'error') reject(new Error(`API process: ${reply.message}`));
        else resolve(reply);
      });
      child.send({ ...request, id } as ApiProcessRequest);
    });
  }

  const { port, pid } = await listening;
  return {
    port,
    pid,
    async eventLoop() {
      const reply = await ask({ type: 'stats' });
      if (reply.type !== 'stats') throw new Error(`API process: unexpected reply ${reply.type}`);
      return reply.eventLoop;
    },
    async cpu() {
      const reply = await ask({ type: 'stats' });
      if (reply.type !== 'stats') throw new Error(`API process: unexpected reply ${reply.type}`);
      return reply.cpu;
    },
    async profileStart(intervalUs = 500) {
      await ask({ type: 'profile-start', intervalUs });
    },
    async profileStop(path) {
      await ask({ type: 'profile-stop', path });
    },
    async flushHeartbeats() {
      await ask({ type: 'flush' });
    },
    async flushes() {
      const reply = await ask({ type: 'flushes' });
      if (reply.type !== 'flushes') throw new Error(`API process: unexpected reply ${reply.type}`);
      return reply.flushes;
    },
  };
}
