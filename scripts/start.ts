import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
import { createLogger, prettyLines, type Logger } from '../observability/log';
import { clientInterceptors } from '../observability/temporal-interceptors';
import { temporalLogger } from '../observability/temporal-logger';
import { createWorker } from '../worker';
import { startDispatcher } from '../dispatch/dispatcher';
import { startPostgres } from './services/postgres';
import { formatGoBuildStatus } from './services/go-install';
import { terminalStatusLine } from './services/status-line';
import { startTemporal, temporalAddressOf, temporalUiUrlOf, type TemporalOptions } from './services/temporal';
import { startDemoFleet } from './seed-demo';
import { temporalConnection } from '../temporal-connection';
import type { RunningOidcProvider } from './services/oidc-provider';

/** `npm start`: Postgres, Temporal with its UI, migrations, the worker and the API in one command. */
async function main(): Promise<void> {
  const config = loadConfig();
  const home = resolve(config.DRYDOCK_HOME);
  mkdirSync(home, { recursive: true });
  // On a terminal a build's progress is one line that changes in place, under the log's lines.
  const status = process.stdout.isTTY ? terminalStatusLine(process.stdout) : null;
  // One logger for everything this process runs: the services' progress, the API, the worker, Temporal.
  const log = createLogger({
    service: 'start',
    level: config.LOG_LEVEL,
    destination: status ? prettyLines(status.destination) : undefined,
  });
  const say = (line: string) => log.info(line);
  const stops: (() => Promise<unknown>)[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    status?.clear();
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
    // TEMPORAL_ADDRESS's server with its TLS settings; unset, the dev server started below, plain.
    const temporalLink = temporalConnection(config);
    if (temporalLink) log.info({ temporal: temporalLink.summary }, 'temporal link');
    const pg = await startPostgres({ url: config.DATABASE_URL, home });
    stops.push(() => pg.stop());
    say(`postgres ready (${pg.source})`);
    await migrateDatabase(pg.url);

    // Temporal comes up beside the API: the first start builds its CLI, for minutes, while the API
    // and the console already serve. Workflows (and the demo's drain) start once it is up.
    const building = new AbortController();
    const temporalOptions: TemporalOptions = {
      address: config.TEMPORAL_ADDRESS,
      cli: config.TEMPORAL_CLI,
      home,
      uiPort: config.TEMPORAL_UI_PORT,
      dbFile: resolve(home, 'temporal.db'),
      log: say,
      signal: building.signal,
      buildProgress: status
        ? (progress) => status.show(formatGoBuildStatus('the Temporal CLI', progress))
        : undefined,
    };
    let temporalUp = false;
    const starting = startTemporal(temporalOptions).then((server) => ((temporalUp = true), server));
    // Awaited below; until then a failure must not count as unhandled.
    starting.catch(() => {});
    stops.push(async () => {
      building.abort();
      await (await starting.catch(() => null))?.stop();
    });

    const { db, sql, close } = createDb(pg.url);
    stops.push(close);
    const ca = loadCa({ file: config.DRYDOCK_CA_KEY_FILE, home });
    const temporalUiUrl = temporalUiUrlOf(temporalOptions);
    const operatorKey = config.DRYDOCK_BOOTSTRAP_OPERATOR_KEY ?? developmentOperatorKey(home);
    // `--oidc`: a local OpenID provider with demo people, and the API trusting it (docs/sign-in.md).
    const oidc =
      config.DRYDOCK_DEMO_OIDC === '1' || process.argv.includes('--oidc')
        ? await startDemoOidc(home, `http://localhost:${config.PORT}`)
        : null;
    if (oidc) {
      stops.push(() => oidc.provider.stop());
      if (config.DRYDOCK_OIDC_ISSUER) say(`--oidc: the demo provider replaces DRYDOCK_OIDC_ISSUER`);
      say(`openid provider ready at ${oidc.provider.issuer}`);
    }
    // The API needs no Temporal: it records requests in Postgres, and the dispatcher starts their
    // workflows once Temporal is up.
    const services = apiServicesOf(oidc ? { ...config, ...oidc.config } : config, {
      db,
      sql,
      log,
      ca,
      operatorKey,
      temporalUiUrl: temporalUiUrl ?? undefined,
    });
    await services.start();
    stops.push(() => services.stop());
    const api = await listen(services.deps, config.PORT, transportOf(config));
    stops.push(() => closeServer(api.server));
    const apiUrl = `http://localhost:${api.port}`;
    // Simulated agents join through the API and heartbeat until Ctrl-C (scripts/seed-demo.ts).
    const demo =
      config.DRYDOCK_DEMO === '1'
        ? await startDemoFleet({ db, api: apiUrl, operatorKey, home, log: say })
        : null;
    if (demo) stops.push(() => demo.simulator.close());
    const running: Running = {
      apiUrl,
      operatorKey,
      oidc: oidc?.provider ?? null,
      temporalUiUrl,
      address: temporalAddressOf(temporalOptions),
    };
    // Written above the progress line, when there is one.
    const banner = (text: string) => (status ? status.destination.write(text) : process.stdout.write(text));
    const announcedEarly = !temporalUp;
    if (announcedEarly) announce(running, log, 'waiting', banner);

    const server = await starting;
    status?.clear();
    say(`temporal ready at ${server.address} (${server.source})`);
    const connectionOptions = temporalLink?.options ?? { address: server.address };
    const workerConnection = await NativeConnection.connect(connectionOptions);
    const worker = await createWorker({
      connection: workerConnection,
      db,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      log,
    });
    const polling = worker.run();
    stops.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await polling.catch(() => {});
      await workerConnection.close();
    });
    const connection = await Connection.connect(connectionOptions);
    stops.push(() => connection.close());
    const temporal = new Client({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      interceptors: clientInterceptors(),
    });
    // What the API recorded meanwhile starts now.
    const dispatcher = await startDispatcher({
      db,
      sql,
      temporal,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      log,
    });
    stops.push(() => dispatcher.stop());
    await ensureLivenessSweep(temporal, config.TEMPORAL_TASK_QUEUE);
    await demo?.startDrain?.();
    announce(running, log, announcedEarly ? 'workflows' : 'all', banner);

    const outcome = await polling.then(
      () => 0,
      (error: unknown) => (log.fatal({ err: error }, 'worker stopped'), 1),
    );
    if (!stopping) await stopAll(outcome);
  } catch (error) {
    // A build or a start stopped by Ctrl-C is no failure.
    if (stopping) return;
    log.fatal({ err: error }, 'start failed');
    await stopAll(1);
  }
}

interface Running {
  apiUrl: string;
  operatorKey: string;
  oidc: RunningOidcProvider | null;
  temporalUiUrl: string | null;
  address: string;
}

/**
 * Says what runs. 'all': everything is up. 'waiting': the API and the console serve, Temporal is
 * not up yet (a first start builds its CLI). 'workflows': after 'waiting', Temporal is up too.
 * The banner is for the person at the terminal, and it shows the operator key: it goes to a
 * terminal only. Piped (a log collector, CI), stdout stays one JSON line per entry, without the key.
 */
function announce(
  running: Running,
  log: Logger,
  what: 'all' | 'waiting' | 'workflows',
  write: (text: string) => void,
): void {
  const { apiUrl, operatorKey } = running;
  const temporalUi = running.temporalUiUrl ?? `(the Temporal server at ${running.address})`;
  if (what === 'workflows') {
    log.info(
      { temporalUi: running.temporalUiUrl ?? undefined },
      'temporal is up: the worker runs, workflows start (the demo drain too)',
    );
    return;
  }
  const waiting = what === 'waiting';
  if (!process.stdout.isTTY) {
    log.info(
      {
        api: apiUrl,
        console: `${apiUrl}/console`,
        temporalUi: running.temporalUiUrl ?? undefined,
        oidcIssuer: running.oidc?.issuer,
        node: process.versions.node,
        ...(waiting ? { workflows: 'waiting for temporal' } : {}),
      },
      waiting ? 'drydock is running; workflows start once temporal is up' : 'drydock is running',
    );
    return;
  }
  const note = waiting
    ? `
  Temporal is not up yet (a first start builds its CLI, for minutes). Until it is, the API and the
  console serve and record what is asked; its workflows start once Temporal and the worker are up
  (the demo's drain too).
`
    : '';
  write(`
  Drydock is running on Node ${process.versions.node}.
    API          ${apiUrl}
    API docs     ${apiUrl}/docs   (OpenAPI: ${apiUrl}/openapi.json)
    Console      ${apiUrl}/console   (sign in with the operator key${running.oidc ? ', or as alice or bob' : ''})
    Temporal UI  ${temporalUi}
    Operator key ${operatorKey}
${note}
  Try:  export DRYDOCK_TOKEN=${operatorKey}
        ./bin/drydock.mjs nodes list
  Roll a maintenance across rack r1 (simulated machines: a driver upgrade, a reboot on a new boot id):
        ./bin/drydock.mjs pools maintain pool-h100-east --selector rack=r1 --step drain:1m \\
          --step run:driver-upgrade --step reboot --step verify --step uncordon \\
          --max-concurrent 2 --healthy-after 5s --reason demo --wait
${running.oidc ? oidcBanner(running.oidc, apiUrl) : ''}  Ctrl-C stops everything.
`);
}

/**
 * The demo provider, started, and the settings that make the API trust it and the console sign
 * people in there: its client `drydock-console` sends the browser back to the console at `apiUrl`.
 */
async function startDemoOidc(home: string, apiUrl: string) {
  // Loaded only here: `npm start` without --oidc never needs the provider (a dev dependency).
  const { startOidcProvider, DEMO_GROUP_MAP } = await import('./services/oidc-provider');
  const groupMapFile = resolve(home, 'oidc-group-map.yaml');
  writeFileSync(groupMapFile, DEMO_GROUP_MAP);
  const redirectUrl = `${apiUrl}/console/oidc/callback`;
  const provider = await startOidcProvider({
    redirectUris: [redirectUrl],
    postLogoutRedirectUris: [`${apiUrl}/console/sign-in`],
  });
  // The console's client secret, new at each start, in a file as production keeps it.
  const secretFile = resolve(home, 'oidc-console-secret');
  writeFileSync(secretFile, `${provider.consoleClient.clientSecret}\n`, { mode: 0o600 });
  chmodSync(secretFile, 0o600);
  return {
    provider,
    config: {
      DRYDOCK_OIDC_ISSUER: provider.issuer,
      DRYDOCK_OIDC_AUDIENCE: provider.audience,
      DRYDOCK_OIDC_GROUP_MAP: groupMapFile,
      DRYDOCK_OIDC_CLIENT_ID: provider.consoleClient.clientId,
      DRYDOCK_OIDC_CLIENT_SECRET_FILE: secretFile,
      DRYDOCK_OIDC_REDIRECT_URL: redirectUrl,
      DRYDOCK_OIDC_RESOURCE: provider.resource,
      DRYDOCK_OIDC_PROVIDER_NAME: 'the demo provider',
    },
  };
}

/** The demo people, signing in to the console, and how to get a token for the API by hand. */
function oidcBanner(provider: RunningOidcProvider, apiUrl: string): string {
  const people = provider.people
    .map((p) => `        ${p.email.padEnd(20)} groups: ${p.groups.join(', ')}`)
    .join('\n');
  return `
  OpenID provider ${provider.issuer}   (the API accepts its access tokens; map: .drydock/oidc-group-map.yaml)
${people}
        Console: ${apiUrl}/console, "Sign in with the demo provider", as alice@example.com (an
        operator) or bob@example.com (tenant acme); its development login page takes any password.
        A token for the API by hand, with the device flow (docs/sign-in.md, Try it locally):
          curl -s -d client_id=${provider.cliClientId} -d 'scope=openid email groups drydock' \\
            -d resource=${provider.resource} ${provider.issuer}/device/auth
          # open verification_uri_complete, sign in as alice@example.com, then
          curl -s -d client_id=${provider.cliClientId} -d device_code=<device_code> \\
            -d grant_type=urn:ietf:params:oauth:grant-type:device_code ${provider.issuer}/token
          curl -H "Authorization: Bearer <access_token>" ${apiUrl}/v1/whoami

`;
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
