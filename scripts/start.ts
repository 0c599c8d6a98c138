import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { newSecret } from '../domain/secrets';
import { apiServicesOf, closeServer, listen, transportOf } from '../api/server';
import { loadCa } from '../ca';
import { loadConfig } from '../config';
import { ensureLivenessSweep } from '../workflows/liveness-client';
import { createDb } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { createLogger } from '../observability/log';
import { clientInterceptors } from '../observability/temporal-interceptors';
import { temporalLogger } from '../observability/temporal-logger';
import { createWorker } from '../worker';
import { startDispatcher } from '../dispatch/dispatcher';
import { startPostgres } from './services/postgres';
import { startTemporal } from './services/temporal';
import { startDemoFleet } from './seed-demo';

/** `npm start`: Postgres, Temporal with its UI, migrations, the worker and the API in one command. */
async function main(): Promise<void> {
  const config = loadConfig();
  const home = resolve(config.DRYDOCK_HOME);
  mkdirSync(home, { recursive: true });
  // One logger for everything this process runs: the services' progress, the API, the worker, Temporal.
  const log = createLogger({ service: 'start', level: config.LOG_LEVEL });
  const say = (line: string) => log.info(line);
  const stops: (() => Promise<unknown>)[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping…');
    for (const stop of stops.reverse()) {
      await stop().catch((error: unknown) => log.error({ err: error }, 'a service did not stop cleanly'));
    }
    process.exit(code);
  };
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));
  Runtime.install({ shutdownSignals: [], logger: temporalLogger(log) });

  try {
    const pg = await startPostgres({ url: config.DATABASE_URL, home });
    stops.push(() => pg.stop());
    say(`postgres ready (${pg.source})`);
    await migrateDatabase(pg.url);

    const server = await startTemporal({
      address: config.TEMPORAL_ADDRESS,
      cli: config.TEMPORAL_CLI,
      home,
      uiPort: config.TEMPORAL_UI_PORT,
      dbFile: resolve(home, 'temporal.db'),
      log: say,
    });
    stops.push(() => server.stop());
    say(`temporal ready at ${server.address} (${server.source})`);

    const { db, sql, close } = createDb(pg.url);
    stops.push(close);
    const workerConnection = await NativeConnection.connect({ address: server.address });
    const ca = loadCa({ file: config.DRYDOCK_CA_KEY_FILE, home });
    const worker = await createWorker({
      connection: workerConnection,
      db,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      log,
    });
    const running = worker.run();
    stops.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => {});
      await workerConnection.close();
    });

    const connection = await Connection.connect({ address: server.address });
    stops.push(() => connection.close());
    const temporal = new Client({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      interceptors: clientInterceptors(),
    });
    const operatorKey = config.DRYDOCK_BOOTSTRAP_OPERATOR_KEY ?? developmentOperatorKey(home);
    const dispatcher = await startDispatcher({ db, sql, temporal, taskQueue: config.TEMPORAL_TASK_QUEUE, log });
    stops.push(() => dispatcher.stop());
    const services = apiServicesOf(config, {
      db,
      sql,
      log,
      ca,
      operatorKey,
      temporalUiUrl: server.uiUrl ?? undefined,
    });
    await services.start();
    stops.push(() => services.stop());
    await ensureLivenessSweep(temporal, config.TEMPORAL_TASK_QUEUE);
    const api = await listen(services.deps, config.PORT, transportOf(config));
    stops.push(() => closeServer(api.server));

    const apiUrl = `http://localhost:${api.port}`;
    if (config.DRYDOCK_DEMO === '1') {
      // Simulated agents join through the API and heartbeat until Ctrl-C (scripts/seed-demo.ts).
      const demo = await startDemoFleet({ db, api: apiUrl, operatorKey, home, log: say });
      stops.push(() => demo.close());
    }

    // The banner is for the person at the terminal, and it shows the operator key: it goes to a
    // terminal only. Piped (a log collector, CI), stdout stays one JSON line per entry, without the key.
    if (process.stdout.isTTY) {
      process.stdout.write(`
  Drydock is running on Node ${process.versions.node}.
    API          ${apiUrl}
    API docs     ${apiUrl}/docs   (OpenAPI: ${apiUrl}/openapi.json)
    Console      ${apiUrl}/console   (sign in with the operator key)
    Temporal UI  ${server.uiUrl ?? `(the Temporal server at ${server.address})`}
    Operator key ${operatorKey}

  Try:  export DRYDOCK_TOKEN=${operatorKey}
        ./bin/drydock.mjs nodes list
  Ctrl-C stops everything.
`);
    } else {
      const temporalUi = server.uiUrl ?? undefined;
      log.info(
        { api: apiUrl, console: `${apiUrl}/console`, temporalUi, node: process.versions.node },
        'drydock is running',
      );
    }
    const outcome = await running.then(
      () => 0,
      (error: unknown) => (log.fatal({ err: error }, 'worker stopped'), 1),
    );
    if (!stopping) await stopAll(outcome);
  } catch (error) {
    log.fatal({ err: error }, 'start failed');
    await stopAll(1);
  }
}

/** In development the operator key lives in `.drydock/operator-key`, made on the first start. */
function developmentOperatorKey(home: string): string {
  const file = resolve(home, 'operator-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const key = newSecret('ddo');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

void main();
