import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createConnection, createServer } from 'node:net';

/** Resolves once something accepts TCP connections on host:port, or rejects after `timeoutMs`. */
export async function waitForPort(host: string, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host, port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** True when nothing listens on the port, on any interface: a server may listen on it everywhere. */
export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** A port a service needs, and which part of it wants the port (the words of a refusal). */
export interface WantedPort {
  port: number;
  by: string;
}

/**
 * Refuses, with one error naming each port and what wanted it, when something already listens on
 * a port of `wanted` or two parts want the same one; `hint` says how to choose others. Starts nothing.
 */
export async function refuseTakenPorts(wanted: WantedPort[], hint: string): Promise<void> {
  const wanters = new Map<number, string[]>();
  for (const { port, by } of wanted) wanters.set(port, [...(wanters.get(port) ?? []), by]);
  const problems: string[] = [];
  for (const [port, by] of wanters) {
    if (by.length > 1) problems.push(`port ${port} is wanted by both ${by.join(' and ')}`);
    else if (!(await portIsFree(port))) problems.push(`port ${port} is taken (wanted by ${by[0]})`);
  }
  if (problems.length > 0) throw new Error(`${problems.join('; ')}: ${hint}`);
}

/**
 * Spawns a long-running child whose stderr is kept for error messages (and its whole output
 * appended to `logFile` when given), in `cwd` when given; stops it on `stop()`.
 */
export function spawnService(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; logFile?: string; cwd?: string } = {},
) {
  const child: ChildProcess = spawn(command, args, {
    stdio: ['ignore', options.logFile ? 'pipe' : 'ignore', 'pipe'],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  if (options.logFile) {
    const log = createWriteStream(options.logFile, { flags: 'a' });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    lastStderr: () => stderr,
    async stop(): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A TCP port nothing listens on right now, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
