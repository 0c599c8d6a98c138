import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnService } from './process';

// What the test harnesses that run a cluster of daemons as children of the test process share
// (scripts/services/slurm.ts, scripts/services/kubernetes.ts).

/** Keeps a daemon from outliving the process that started it (kills it when that process dies). */
const SETPRIV = '/usr/bin/setpriv';
const POLL_MS = 100;

export type Daemon = ReturnType<typeof spawnService>;

/** A daemon in the foreground, a child of this process that dies with it where setpriv is there. */
export function spawnDaemon(
  command: string,
  args: string[],
  options: Parameters<typeof spawnService>[2] = {},
): Daemon {
  return existsSync(SETPRIV)
    ? spawnService(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options)
    : spawnService(command, args, options);
}

/** A failure that waiting longer would not mend: `untilReady` ends at once with it. */
export class Fatal extends Error {}

/**
 * Polls `ready` until it holds, failing when one of `running` exits meanwhile, when `ready` throws
 * `Fatal`, or after `timeoutMs`. `context(name?)` adds the logs that explain a failure (the exited
 * daemon's, when one exited).
 */
export async function untilReady(
  what: string,
  ready: () => Promise<boolean>,
  o: { running: Map<string, Daemon>; timeoutMs: number; context: (exited?: string) => string },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  let last = '';
  for (;;) {
    for (const [name, service] of o.running) {
      if (service.child.exitCode !== null || service.child.signalCode !== null) {
        throw new Error(
          `${name} exited while waiting for ${what}: ${service.lastStderr().trim()}${o.context(name)}`,
        );
      }
    }
    try {
      if (await ready()) return;
    } catch (error) {
      if (error instanceof Fatal) throw new Error(`${what}: ${error.message}${o.context()}`);
      last = (error as Error).message;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${o.timeoutMs} ms${last ? ` (last: ${last})` : ''}${o.context()}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * Removes the state dirs (`<owner pid>-<id>`) under `root` whose owner process died without
 * stopping them; `before` runs first on each (what outlived the daemons).
 */
export async function sweepAbandoned(root: string, before?: (dir: string) => Promise<void>): Promise<void> {
  if (!existsSync(root)) return;
  for (const entry of readdirSync(root)) {
    const owner = Number(entry.split('-')[0]);
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) continue;
    const dir = join(root, entry);
    await before?.(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
