import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { closeServer, listen } from '../../api/server';
import { createToken } from '../support/agents';
import { seedPool } from '../support/fixtures';
import { eventually, type Harness } from '../support/harness';
import { answered } from '../support/witnesses';

/** The real `drydock-agent` binary. */
export const AGENT_BIN = fileURLToPath(new URL('../../bin/drydock-agent.mjs', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A `drydock-agent run` in the background, its stderr kept. */
export interface RunningAgent {
  child: ChildProcess;
  stderr(): string;
  /** Resolves with the exit code once it exits. */
  exited: Promise<number | null>;
  /** Resolves once stderr matches `pattern` (checked from `from` on), or rejects after `timeoutMs`. */
  waitForLog(pattern: RegExp, timeoutMs?: number, from?: number): Promise<void>;
}

export interface AgentBench {
  /** The URL of the API listening for this file. */
  api: string;
  /** Runs `drydock-agent ARGS` to completion. */
  agent(args: string[], env?: NodeJS.ProcessEnv): Promise<Run>;
  /** Starts `drydock-agent ARGS` (a `run`) in the background; it is killed after the file. */
  spawnAgent(args: string[]): RunningAgent;
  /** A fresh, empty data directory, removed after the file. */
  dataDir(): string;
  /** Resolves once the API has answered every request it received (none is still being handled). */
  idle(): Promise<void>;
}

/**
 * Listens with the harness's app for the file's tests, and runs the agent binary against it.
 * Agents still running are killed before the server closes (it waits for their long-polls).
 */
export function useAgentBench(h: Harness): AgentBench {
  let server: Server | undefined;
  const children = new Set<ChildProcess>();
  const dirs: string[] = [];
  let received = 0;
  const bench: AgentBench = {
    api: '',
    agent(args, env = {}) {
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [AGENT_BIN, ...args],
          { env: { ...process.env, ...env }, timeout: 60_000 },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
            resolve({ code, stdout, stderr });
          },
        );
      });
    },
    spawnAgent(args) {
      const child = spawn(process.execPath, [AGENT_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      children.add(child);
      let stderr = '';
      const listeners = new Set<() => void>();
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        for (const listener of listeners) listener();
      });
      const exited = new Promise<number | null>((resolve) =>
        child.once('exit', (code) => {
          children.delete(child);
          resolve(code);
        }),
      );
      return {
        child,
        stderr: () => stderr,
        exited,
        waitForLog(pattern, timeoutMs = 10_000, from = 0) {
          return new Promise((resolve, reject) => {
            const check = () => {
              if (!pattern.test(stderr.slice(from))) return;
              clearTimeout(timer);
              listeners.delete(check);
              resolve();
            };
            const timer = setTimeout(() => {
              listeners.delete(check);
              reject(new Error(`no ${pattern} on the agent's stderr within ${timeoutMs} ms:\n${stderr}`));
            }, timeoutMs);
            listeners.add(check);
            check();
          });
        },
      };
    },
    dataDir() {
      const dir = mkdtempSync(join(tmpdir(), 'drydock-agent-test-'));
      dirs.push(dir);
      return join(dir, 'data');
    },
    async idle() {
      // The API counts a request once its handler is done; this one is counted after it renders.
      await eventually(async () => {
        const before = received;
        return (await answered(bench.api, {})) >= before;
      });
    },
  };

  beforeAll(async () => {
    const listening = await listen(h.deps, 0);
    server = listening.server;
    server.on('request', () => void received++);
    bench.api = `http://127.0.0.1:${listening.port}`;
  });

  afterAll(async () => {
    await Promise.all(
      [...children].map(
        (child) =>
          new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGKILL'))),
      ),
    );
    if (server) await closeServer(server);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  return bench;
}

/** A machine joined through the real binary, with a copy of the binary beside its data directory. */
export interface Machine {
  dir: string;
  /** A copy of `bin/drydock-agent.mjs`: what `run --binary` names, so a purge deletes the copy. */
  binary: string;
  nodeId: string;
  credential: string;
}

/** Joins a machine into pool `poolId` (made for tenant acme) with a token, as `drydock-agent join`. */
export async function joinedMachine(
  h: Harness,
  bench: AgentBench,
  poolId: string,
  dir = bench.dataDir(),
): Promise<Machine> {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const token = await createToken(h, { poolId });
  const joined = await bench.agent(['join', '--api', bench.api, '--token', token.secret, '--data-dir', dir]);
  if (joined.code !== 0) throw new Error(`join failed: ${joined.stderr}`);
  const identity = JSON.parse(readFileSync(join(dir, 'identity.json'), 'utf8'));
  const binary = join(dirname(dir), 'drydock-agent.mjs');
  copyFileSync(AGENT_BIN, binary);
  return { dir, binary, nodeId: identity.nodeId, credential: identity.credential };
}

/** `drydock-agent run --binary COPY [ARGS]` with a fast heartbeat, once it is connected. */
export async function runMachine(
  bench: AgentBench,
  m: Machine,
  dataDir = m.dir,
  args: string[] = [],
): Promise<RunningAgent> {
  const agent = bench.spawnAgent([
    'run',
    '--data-dir',
    dataDir,
    '--heartbeat-every',
    '300ms',
    '--binary',
    m.binary,
    ...args,
  ]);
  await agent.waitForLog(/connected to .* as node_/, 15_000);
  return agent;
}
