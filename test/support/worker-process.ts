import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { Harness } from './harness';

export interface WorkerProcessOptions {
  /** The queue it polls (default: the file's). */
  taskQueue?: string;
  /** The fault hook of worker.ts: die right after this many steps of `workflowId` have returned. */
  killAfterStep?: { steps: number; workflowId: string };
  /** The port of its `/metrics` (default: any free one, so that workers of parallel files never collide). */
  metricsPort?: number;
  /** A build (`buildDist`) to run instead of the sources: `node <dist>/worker.js`, with its own workflow bundle. */
  dist?: string;
  /** More of its environment (tracing, say). */
  env?: Record<string, string>;
}

/**
 * How long a test worker's dispatcher holds the outbox rows it claimed: a worker killed mid-claim
 * (crash tests) leaves them to the next one this soon, not after production's 30 s.
 */
export const TEST_OUTBOX_LEASE_MS = 2_000;

/** The real worker entry point (`entry/worker.ts`, or a build's worker.js) as a child process on this file's database. */
export function startWorkerProcess(h: Harness, options: WorkerProcessOptions = {}): ChildProcess {
  const fault = options.killAfterStep;
  const program = options.dist ? [join(options.dist, 'worker.js')] : ['--import', 'tsx', 'entry/worker.ts'];
  return spawn(process.execPath, program, {
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.temporalAddress,
      TEMPORAL_TASK_QUEUE: options.taskQueue ?? h.taskQueue,
      ...(options.dist ? {} : { DRYDOCK_WORKFLOW_BUNDLE: inject('workflowBundlePath') }),
      DRYDOCK_CA_KEY_FILE: h.caKeyFile,
      DRYDOCK_CLUSTER_ID: h.clusterId,
      DRYDOCK_WORKER_METRICS_PORT: String(options.metricsPort ?? 0),
      DRYDOCK_OUTBOX_LEASE_MS: String(TEST_OUTBOX_LEASE_MS),
      // Warnings and errors only, into the test's output: many workers start in a crash test.
      LOG_LEVEL: 'warn',
      ...options.env,
      ...(fault
        ? {
            DRYDOCK_FAULT_KILL_AFTER_STEP: String(fault.steps),
            DRYDOCK_FAULT_KILL_WORKFLOW_ID: fault.workflowId,
          }
        : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/** Resolves with the signal that ended the child (null: it exited by itself). */
export function workerExit(child: ChildProcess): Promise<NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode);
  return new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
}

/** SIGKILL: no shutdown, no grace, as when a machine dies. */
export async function killWorker(child: ChildProcess): Promise<void> {
  const exited = workerExit(child);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
}
