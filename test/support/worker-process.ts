import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import type { Harness } from './harness';

/** The real worker entry point (`worker.ts`) as a child process on this file's database and queue. */
export function startWorkerProcess(h: Harness): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'worker.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.temporalAddress,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      DRYDOCK_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      DRYDOCK_CA_KEY_FILE: h.caKeyFile,
      DRYDOCK_CLUSTER_ID: h.clusterId,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGKILL: no shutdown, no grace, as when a machine dies. */
export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
