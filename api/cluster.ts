import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from '../observability/log';

/** `API_PROCESSES` as a number of processes: `auto` or 0 is one per core. */
export function apiProcessCount(setting: number | 'auto', cores = availableParallelism()): number {
  return setting === 'auto' || setting === 0 ? cores : setting;
}

/** A worker that dies within this long of its start waits longer before the next one. */
const STABLE_MS = 10_000;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 30_000;

/**
 * The primary of `API_PROCESSES` > 1: forks `count` API processes that share one port (node:cluster
 * hands the listening socket around), starts a new one in place of any that dies (after a backoff
 * that doubles while they keep dying young), and on SIGTERM or SIGINT asks each to stop gracefully
 * and exits once all have: 0 when every one stopped cleanly.
 *
 * Each process keeps its own memory: agent sessions (an agent's long-poll and its heartbeats reach
 * whichever process its connection landed on, and the wake-ups and credential invalidations come
 * by LISTEN/NOTIFY to every process), per-address rate limits (per process: N processes allow up
 * to N times the configured rate), single-flight joins (the database decides between processes).
 */
export function superviseApiProcesses(count: number, log: Logger): void {
  let stopping = false;
  let backoffMs = FIRST_BACKOFF_MS;
  let unclean = 0;
  const startedAt = new Map<Worker, number>();

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
  };

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (code !== 0) unclean++;
      log.info({ pid: worker.process.pid, code, signal }, 'api process stopped');
      if (startedAt.size === 0) process.exit(unclean === 0 ? 0 : 1);
      return;
    }
    backoffMs = lived < STABLE_MS ? Math.min(backoffMs * 2, MAX_BACKOFF_MS) : FIRST_BACKOFF_MS;
    log.error(
      { pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: backoffMs },
      'api process died; starting another',
    );
    setTimeout(() => {
      if (!stopping) fork();
    }, backoffMs).unref();
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, processes: startedAt.size }, 'stopping the api processes');
    if (startedAt.size === 0) process.exit(0);
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let i = 0; i < count; i++) fork();
  log.info({ processes: count }, 'api processes started');
}
