import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll } from 'vitest';
import { closeServer, listen } from '../../api/server';
import type { Harness } from '../support/harness';

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
}

/**
 * Listens with the harness's app for the file's tests, and runs the agent binary against it.
 * Agents still running are killed before the server closes (it waits for their long-polls).
 */
export function useAgentBench(h: Harness): AgentBench {
  let server: ServerType | undefined;
  const children = new Set<ChildProcess>();
  const dirs: string[] = [];
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
  };

  beforeAll(async () => {
    const listening = await listen(h.deps, 0);
    server = listening.server;
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
