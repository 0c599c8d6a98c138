/**
 * The child side of bench/support/worker-process.ts: the real worker (`createWorker` from
 * worker.ts) and the outbox's dispatcher beside it, with their own pool and Temporal connection, in
 * a process of its own, as production runs them. Takes its settings from BENCH_WORKER_CONFIG and its orders over IPC: `stats`, `stop`.
 */
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createDb } from '../../db/client';
import { startDispatcher } from '../../dispatch/dispatcher';
import { silentLogger } from '../../observability/log';
import { clientInterceptors } from '../../observability/temporal-interceptors';
import { capYoungGeneration, createWorker } from '../../worker';
import { bundleInChildProcess } from '../../workflow-bundle';
import type { WorkerProcessConfig, WorkerProcessReply, WorkerProcessRequest } from './worker-process';

const baselinePath = fileURLToPath(new URL('../workflows/baseline.ts', import.meta.url));

async function main(): Promise<void> {
  // As worker.ts main does, before any worker thread starts.
  capYoungGeneration();
  const config = JSON.parse(process.env.BENCH_WORKER_CONFIG ?? '') as WorkerProcessConfig;
  // Quiet, and no signal handlers of its own: the benchmark stops it over IPC.
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  const pool = createDb(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const workers: Worker[] = [
    await createWorker({
      connection,
      db: pool.db,
      namespace: 'default',
      taskQueue: config.taskQueue,
      // As worker.ts: a prebuilt bundle when DRYDOCK_WORKFLOW_BUNDLE names one, else bundled at start.
      workflowBundle: process.env.DRYDOCK_WORKFLOW_BUNDLE
        ? { codePath: process.env.DRYDOCK_WORKFLOW_BUNDLE }
        : undefined,
    }),
  ];
  if (config.baselineTaskQueue) {
    workers.push(
      await Worker.create({
        connection,
        namespace: 'default',
        taskQueue: config.baselineTaskQueue,
        // Bundled as the drain worker's workflows are: webpack's memory ends with its child.
        workflowBundle: await bundleInChildProcess({
          workflowsPath: baselinePath,
          workflowInterceptorModules: [],
          preloadModules: [],
        }),
        activities: { noop: async () => {} },
      }),
    );
  }
  const runs = workers.map((w) => w.run());
  // As worker.ts main runs it: the dispatcher starts the drains' workflows and sends their wake-ups.
  const clientConnection = await Connection.connect({ address: config.temporalAddress });
  const dispatcher = await startDispatcher({
    db: pool.db,
    sql: pool.sql,
    temporal: new Client({ connection: clientConnection, interceptors: clientInterceptors(null) }),
    taskQueue: config.taskQueue,
    log: silentLogger(),
  });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await dispatcher.stop();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(runs);
      await clientConnection.close();
      await connection.close();
      await pool.close();
    })());
  // A worker that stops by itself (a crash) ends the process: the benchmark sees it exit.
  for (const run of runs) {
    run.catch((error: unknown) => {
      if (stopping) return;
      console.error(`bench worker process: a worker stopped: ${(error as Error).message}`);
      process.exit(1);
    });
  }

  const handle = async (message: WorkerProcessRequest): Promise<WorkerProcessReply> => {
    switch (message.type) {
      case 'stats':
        return {
          id: message.id,
          type: 'stats',
          cpu: process.cpuUsage(),
          maxCachedWorkflows: workers[0]!.options.maxCachedWorkflows,
        };
      case 'stop':
        await stop();
        return { id: message.id, type: 'ok' };
    }
  };
  process.on('message', (message: WorkerProcessRequest) => {
    handle(message).then(
      (reply) =>
        process.send!(reply, () => {
          if (message.type === 'stop') process.exit(0);
        }),
      (error: unknown) => process.send!({ id: message.id, type: 'error', message: (error as Error).message }),
    );
  });
  // The benchmark went away without stopping us: do not outlive it.
  process.once('disconnect', () => void stop().finally(() => process.exit(1)));
  process.send!({ type: 'ready', pid: process.pid } satisfies WorkerProcessReply);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
