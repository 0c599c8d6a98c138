import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './harness';

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
  /** Resolves once the bridge logged a line for which `match` holds, looking from line `from` on. */
  logged(match: (line: Record<string, unknown>) => boolean, from?: number): Promise<Record<string, unknown>>;
  /** SIGTERM (or `signal`), then waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `drydock-bridge slurm` as its own process, with --json log lines collected. */
export function startBridge(options: {
  api: string;
  token: string;
  cluster: string;
  slurmConf: string;
  spool: string;
  config?: string;
  sweepEvery?: string;
}): BridgeProcess {
  const args = [
    BRIDGE,
    '--json',
    'slurm',
    '--cluster',
    options.cluster,
    '--spool',
    options.spool,
    '--sweep-every',
    options.sweepEvery ?? '10s',
    ...(options.config ? ['--config', options.config] : []),
  ];
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH,
      SLURM_CONF: options.slurmConf,
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
  return {
    child,
    lines,
    logged: (match, from = 0) =>
      eventually(async () => lines.slice(from).find(match), 30_000).catch((error: Error) => {
        throw new Error(
          `${error.message}; the bridge said:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`,
        );
      }),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
