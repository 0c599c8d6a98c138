import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { caOffer, loadCa } from '../ca';
import { createDb } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { hashSecret } from '../domain/secrets';
import { createApp } from './app';
import type { AppDeps } from './env';
import { createApiServices } from './services';

/** Serves the API on `port`; resolves once it listens. */
export async function listen(deps: AppDeps, port: number): Promise<{ server: ServerType; port: number }> {
  const app = createApp(deps);
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname: '0.0.0.0' }, (info) =>
      resolve({ server, port: info.port }),
    );
  });
}

/** Closes the server, waiting for requests in flight. */
export function closeServer(server: ServerType): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL || !config.TEMPORAL_ADDRESS) {
    throw new Error(
      'api/server.ts needs DATABASE_URL and TEMPORAL_ADDRESS (npm start runs everything together)',
    );
  }
  await migrateDatabase(config.DATABASE_URL);
  const { db, sql, close } = createDb(config.DATABASE_URL);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const ca = caOffer(
    loadCa({ file: config.DRYDOCK_CA_KEY_FILE, home: config.DRYDOCK_HOME }),
    config.DRYDOCK_CA_PREVIOUS_KEY_FILES,
    config.DRYDOCK_CLUSTER_ID,
  );
  const services = createApiServices({
    db,
    sql,
    temporal,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    clusterId: config.DRYDOCK_CLUSTER_ID,
    caPublicKeyPem: ca.publicKey,
    caEndorsements: ca.endorsements,
    bootstrapKeyHash: config.DRYDOCK_BOOTSTRAP_OPERATOR_KEY
      ? hashSecret(config.DRYDOCK_BOOTSTRAP_OPERATOR_KEY)
      : undefined,
  });
  await services.start();
  const { server, port } = await listen(services.deps, config.PORT);
  console.log(`drydock api listening on :${port}`);
  const stop = async () => {
    await closeServer(server);
    await services.stop();
    await connection.close();
    await close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
