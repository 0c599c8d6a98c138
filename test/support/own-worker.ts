import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { inject } from 'vitest';
import { startDispatcher } from '../../dispatch/dispatcher';
import { silentLogger } from '../../observability/log';
import { clientInterceptors } from '../../observability/temporal-interceptors';
import { createWorker, registerSearchAttributes } from '../../worker';
import type { Harness } from './harness';

/**
 * A worker and its dispatcher on a Temporal server of a file's own (`address`), as `npm run worker`
 * runs them, on the harness's database and task queue: `temporal` is a client of that server,
 * `stop` stops the dispatcher and the worker and closes their connections.
 */
export async function startOwnWorker(
  h: Harness,
  address: string,
): Promise<{ temporal: Client; stop: () => Promise<void> }> {
  const workerConnection = await NativeConnection.connect({ address });
  await registerSearchAttributes(workerConnection, 'default');
  const clientConnection = await Connection.connect({ address });
  const temporal = new Client({ connection: clientConnection, interceptors: clientInterceptors(null) });
  const worker = await createWorker({
    connection: workerConnection,
    db: h.db,
    namespace: 'default',
    taskQueue: h.taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  const running = worker.run();
  const dispatcher = await startDispatcher({
    db: h.db,
    sql: h.sql,
    temporal,
    taskQueue: h.taskQueue,
    log: silentLogger(),
  });
  const stop = async () => {
    await dispatcher.stop();
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await clientConnection.close();
    await workerConnection.close();
  };
  return { temporal, stop };
}
