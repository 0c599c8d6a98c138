import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call } from './fixtures';
import { eventually, type Harness } from './harness';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const BRIDGE = join(ROOT, 'bin', 'drydock-bridge.mjs');
const HOOK = join(ROOT, 'bin', 'drydock-slurm-hook');

/**
 * The hook as slurm.conf names it in a test: slurmctld runs it with no arguments and no PATH, so the
 * spool is set by a wrapper that then runs bin/drydock-slurm-hook (as an admin would set it in the
 * hook's environment with a wrapper of their own, or leave the default /run/drydock-bridge).
 */
export function slurmHook(dir: string, spool: string): string {
  mkdirSync(spool, { recursive: true, mode: 0o1777 });
  const path = join(dir, 'drydock-slurm-hook');
  writeFileSync(path, `#!/bin/sh\nDRYDOCK_BRIDGE_SPOOL='${spool}' exec '${HOOK}'\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A pass of the bridge, as its --json log line has it. */
export interface PassLine {
  message: string;
  observed?: number;
  released?: number;
  ended?: number;
  problems?: string[];
}

export interface BridgeProcess {
  child: ChildProcess;
  /** Every JSON log line so far. */
  lines: Record<string, unknown>[];
  /** Resolves once `check` answers (polled every 100 ms, 30 s at most); failing, it quotes the bridge's log. */
  until<T>(check: () => Promise<T | undefined | false>, ms?: number): Promise<T>;
  /** Resolves once the bridge logged a line for which `match` holds, looking from line `from` on. */
  logged(match: (line: Record<string, unknown>) => boolean, from?: number): Promise<Record<string, unknown>>;
  /** SIGTERM (or `signal`), then waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `drydock-bridge --json <argv…>` as its own process (`argv`: the scheduler's word and its
 * flags; `env`: what its clients need beyond PATH), with its log lines collected.
 */
export function startBridge(options: {
  api: string;
  token: string;
  argv: string[];
  env?: Record<string, string>;
}): BridgeProcess {
  const child = spawn(process.execPath, [BRIDGE, '--json', ...options.argv], {
    env: {
      PATH: process.env.PATH,
      ...options.env,
      DRYDOCK_API: options.api,
      DRYDOCK_TOKEN: options.token,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    partial += chunk;
    const complete = partial.split('\n');
    partial = complete.pop()!;
    for (const text of complete) {
      if (!text) continue;
      try {
        lines.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        lines.push({ level: 'text', message: text });
      }
    }
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const quoting = (error: Error): never => {
    throw new Error(`${error.message}; the bridge said:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`);
  };
  return {
    child,
    lines,
    until: (check, ms = 30_000) => eventually(check, ms, 100).catch(quoting),
    logged: (match, from = 0) => eventually(async () => lines.slice(from).find(match), 30_000).catch(quoting),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * Waits until the bridge reported each of these nodes (a scheduler view on each): a bridge's slow
 * start on a busy machine is no test's business, so a setup waits for it, up to 2 minutes.
 */
export async function untilReported(h: Harness, nodeIds: string[]): Promise<void> {
  await eventually(
    async () => {
      for (const id of nodeIds) {
        const node = (await call(h, 'GET', `/v1/nodes/${id}`)).body as { schedulers: unknown[] };
        if (node.schedulers.length === 0) return false;
      }
      return true;
    },
    120_000,
    100,
  );
}

/** An allocation a bridge recorded, as the API lists it: what the bridge tests read of it. */
export interface ObservedView {
  id: string;
  externalId: string;
  tenantId: string;
  endsAt: string | null;
  live: boolean;
  releasedBy: string | null;
  ending: { action: string; answer: string } | null;
}

/** Reads a bridge's allocations: `live(nodeId)` on a node, `of(externalId)` by the scheduler's id. */
export function observedAllocations(h: Harness, source: string) {
  const list = async (query: string) =>
    (await call(h, 'GET', `/v1/allocations?source=${source}&${query}`)).body.items as ObservedView[];
  return {
    live: (nodeId: string) => list(`nodeId=${nodeId}&live=true`),
    of: (externalId: string) => list(`externalId=${externalId}`),
  };
}
