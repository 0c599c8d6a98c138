import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from './activities';
import { loadCa, type ClusterCa } from './ca';
import { loadConfig } from './config';
import { createDb, type Db } from './db/client';
import { ensureLivenessSweep } from './workflows/liveness-client';
import { SEARCH_ATTRIBUTE_KEYS } from './workflows/search-attributes';

export const workflowsPath = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));

/** Registers Drydock's search attributes in the namespace when they are missing (idempotent). */
export async function registerSearchAttributes(
  connection: NativeConnection,
  namespace: string,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTE_KEYS.filter((key) => !(key.name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((key) => [
        key.name,
        proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
}

export interface WorkerDeps {
  connection: NativeConnection;
  db: Db;
  /** The cluster CA that signs purge commands, and the cluster id they name. */
  ca: ClusterCa;
  clusterId: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt bundle (tests build it once); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** The Temporal worker: every workflow and every activity of Drydock, on one task queue. */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  await registerSearchAttributes(deps.connection, deps.namespace);
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath }),
    activities: createActivities({ db: deps.db, ca: deps.ca, clusterId: deps.clusterId }),
    // Lets an activity finish its transaction on shutdown instead of being cut mid-way.
    shutdownGraceTime: '10 seconds',
  });
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
    throw new Error('worker.ts needs DATABASE_URL and TEMPORAL_ADDRESS (npm start runs everything together)');
  }
  Runtime.install({ shutdownSignals: ['SIGINT', 'SIGTERM'] });
  const { db, close } = createDb(config.DATABASE_URL);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const bundlePath = config.DRYDOCK_WORKFLOW_BUNDLE;
  const worker = await createWorker({
    connection,
    db,
    ca: loadCa({ file: config.DRYDOCK_CA_KEY_FILE, home: config.DRYDOCK_HOME }),
    clusterId: config.DRYDOCK_CLUSTER_ID,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: bundlePath ? { codePath: bundlePath } : undefined,
  });
  // The liveness controller runs once per namespace; starting it again finds the running one.
  const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  await ensureLivenessSweep(
    new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }),
    config.TEMPORAL_TASK_QUEUE,
  );
  await clientConnection.close();
  await worker.run();
  await connection.close();
  await close();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
