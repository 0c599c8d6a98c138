import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { AgentError } from './errors';

/** What the command line of a drydock agent process looks like (its launcher or its source). */
const AGENT_COMMAND = /drydock-agent|agent[\\/]main/;

/**
 * The pid of the `run` process that owns the data directory, or null. A pid whose process is gone,
 * or (where /proc tells) is not a drydock agent, is stale: `stop` must never signal a stranger
 * that inherited the number.
 */
export function runningAgent(file: string): number | null {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  if (!alive(pid)) return null;
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!AGENT_COMMAND.test(command)) return null;
  } catch {
    // No /proc (not Linux), or it went away meanwhile: trust the liveness check.
  }
  return pid;
}

/** Records this process as the data directory's agent; refuses when another agent runs there. */
export function claimPidFile(file: string): void {
  const other = runningAgent(file);
  if (other !== null) throw new AgentError(`an agent already runs for this data directory (pid ${other})`);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
}

/** Removes the pid file if it still names this process. */
export function releasePidFile(file: string): void {
  try {
    if (Number(readFileSync(file, 'utf8').trim()) === process.pid) rmSync(file, { force: true });
  } catch {
    // Already gone.
  }
}

/** Resolves true once `pid` has exited, false after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // An exited process its parent has not reaped yet (a zombie) still answers signal 0.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
