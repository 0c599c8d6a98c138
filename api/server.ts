import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { TracerProvider } from '@opentelemetry/api';
import type { Sql } from 'postgres';
import { loadConfig, type Config } from '../config';
import { caOffer, loadCa, type ClusterCa } from '../ca';
import { createDb, postgresLinkSummary, type Db } from '../db/client';
import { schemaAllowsStart } from '../db/schema-version';
import { createLogger, type Logger } from '../observability/log';
import { hashSecret } from '../domain/secrets';
import { caFingerprint } from '../domain/signing';
import { createApp } from './app';
import { maxBodyBytesOf } from './body-limit';
import { clientErrorHandler, requestErrorAnswer } from './client-errors';
import type { AppDeps } from './env';
import { rateLimitsOf } from './rate-limit';
import { createAppDeps } from './deps';
import { loadSshCa } from './ssh-ca';
import { oidcSettingsOf } from './person-tokens';
import { consoleSignInOf } from './console-sign-in';
import { startTracing, tracesEndpointOf } from '../observability/tracing';
import { apiProcessCount, superviseApiProcesses } from './cluster';
import { aggregateApiMetrics } from '../observability/metrics-cluster';

/** How long a client may take to send a request; none of them bounds the answer (long-polls). */
export interface TransportSettings {
  /** From connection (or the end of the previous request) to the end of the headers. */
  headersTimeoutMs: number;
  /** To the end of the whole request, body included; at least `headersTimeoutMs`. */
  requestTimeoutMs: number;
  /** An idle connection between requests; over the agent's 10 s heartbeat, so it reuses one. */
  keepAliveTimeoutMs: number;
}

/** The timeouts `config` sets; Node refuses a headers timeout over the request timeout. */
export function transportOf(config: Config): TransportSettings {
  if (config.DRYDOCK_HEADERS_TIMEOUT_MS > config.DRYDOCK_REQUEST_TIMEOUT_MS) {
    throw new Error('invalid configuration: DRYDOCK_HEADERS_TIMEOUT_MS is over DRYDOCK_REQUEST_TIMEOUT_MS');
  }
  return {
    headersTimeoutMs: config.DRYDOCK_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.DRYDOCK_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.DRYDOCK_KEEP_ALIVE_TIMEOUT_MS,
  };
}

export const DEFAULT_TRANSPORT = transportOf(loadConfig({}));

/** Serves the API on `port`; resolves once it listens. */
export async function listen(
  deps: AppDeps,
  port: number,
  transport: TransportSettings = DEFAULT_TRANSPORT,
): Promise<{ server: Server; port: number }> {
  const app = createApp(deps);
  const serverOptions = {
    // A request without Host is the app's to refuse, in the envelope (`requestErrorAnswer`), not
    // Node's bare 400.
    requireHostHeader: false,
    headersTimeout: transport.headersTimeoutMs,
    requestTimeout: transport.requestTimeoutMs,
    keepAliveTimeout: transport.keepAliveTimeoutMs,
    // Node looks for late requests only this often (30 s by default): a tenth of the shortest
    // timeout keeps the cut close to the configured time.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, transport.headersTimeoutMs / 10)),
  };
  // A request hono cannot make a URL of (no Host, a Host that is no host, an absolute URL it does
  // not serve) goes to `errorHandler`: answered in the envelope with a request id.
  const listener = getRequestListener(app.fetch, { errorHandler: requestErrorAnswer });
  return new Promise((resolve) => {
    const server = createServer(serverOptions, (request, response) => void listener(request, response));
    server.listen(port, '0.0.0.0', () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : port });
    });
    server.on('clientError', clientErrorHandler(transport.requestTimeoutMs));
    // `Expect: 100-continue` asks before sending the body: a body declared over the limit is not
    // invited (Node would say "continue" to every one), the app's refusal is the answer.
    server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      if (Number(request.headers['content-length'] ?? 0) <= maxBodyBytesOf(path)) response.writeContinue();
      server.emit('request', request, response);
    });
  });
}

/** An API process's services as `config` sets them, over the connections and CA its caller holds. */
export function apiServicesOf(
  config: Config,
  held: {
    db: Db;
    sql: Sql;
    log: Logger;
    ca: ClusterCa;
    operatorKey?: string;
    temporalUiUrl?: string;
    tracerProvider?: TracerProvider;
  },
) {
  const offer = caOffer(held.ca, config.DRYDOCK_CA_PREVIOUS_KEY_FILES, config.DRYDOCK_CLUSTER_ID);
  const sshCa = loadSshCa({ file: config.DRYDOCK_SSH_CA_KEY_FILE, home: config.DRYDOCK_HOME });
  held.log.info({ sshCaFingerprint: sshCa.fingerprint }, `SSH CA key ${sshCa.fingerprint}`);
  return createAppDeps({
    db: held.db,
    sql: held.sql,
    log: held.log,
    clusterId: config.DRYDOCK_CLUSTER_ID,
    caPrivateKey: held.ca.privateKey,
    caPublicKeyPem: offer.publicKey,
    caEndorsements: offer.endorsements,
    sshCa,
    bootstrapKeyHash: held.operatorKey ? hashSecret(held.operatorKey) : undefined,
    oidc: oidcSettingsOf(config),
    consoleSignIn: consoleSignInOf(config),
    metricsTokenHash: config.DRYDOCK_METRICS_TOKEN ? hashSecret(config.DRYDOCK_METRICS_TOKEN) : undefined,
    rateLimits: rateLimitsOf(config),
    duplicateSessions: {
      alternations: config.DRYDOCK_DUPLICATE_SESSION_ALTERNATIONS,
      windowMs: config.DRYDOCK_DUPLICATE_SESSION_WINDOW_MS,
    },
    temporalUiUrl: config.DRYDOCK_TEMPORAL_UI_URL ?? held.temporalUiUrl,
    temporalNamespace: config.TEMPORAL_NAMESPACE,
    tracerProvider: held.tracerProvider,
  });
}

/** Closes the server, waiting for requests in flight. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

async function main(config: Config, log: Logger): Promise<void> {
  if (!config.DATABASE_URL) {
    throw new Error('api/server.ts needs DATABASE_URL (npm start runs everything together)');
  }
  // Once, before any API process: the schema checked (`drydock migrate` applies it, a deploy runs
  // it first), and the CA key files made if they are missing.
  if (cluster.isPrimary) {
    const link = postgresLinkSummary(config.DATABASE_URL);
    if (!(await schemaAllowsStart(config.DATABASE_URL, log))) return;
    const { publicKeyPem } = loadCa({ file: config.DRYDOCK_CA_KEY_FILE, home: config.DRYDOCK_HOME });
    // Where it connects and the fingerprints of the files it read, never a key.
    log.info({ postgres: link, caKey: caFingerprint(publicKeyPem) }, 'links and keys');
    loadSshCa({ file: config.DRYDOCK_SSH_CA_KEY_FILE, home: config.DRYDOCK_HOME });
    const processes = apiProcessCount(config.API_PROCESSES);
    if (processes > 1) {
      aggregateApiMetrics();
      return superviseApiProcesses(processes, log);
    }
  }
  const { db, sql, close } = createDb(config.DATABASE_URL);
  const tracing = startTracing({ service: 'drydock-api', endpoint: tracesEndpointOf(config) });
  const ca = loadCa({ file: config.DRYDOCK_CA_KEY_FILE, home: config.DRYDOCK_HOME });
  const services = apiServicesOf(config, {
    db,
    sql,
    log,
    ca,
    operatorKey: config.DRYDOCK_BOOTSTRAP_OPERATOR_KEY,
    tracerProvider: tracing?.provider,
  });
  await services.start();
  const { server, port } = await listen(services.deps, config.PORT, transportOf(config));
  log.info({ port, node: process.versions.node }, `drydock api listening on :${port}`);
  const stop = async () => {
    await closeServer(server);
    await services.stop();
    await close();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

/** The API process as entry/api.ts runs it: configured from the environment, exits 1 on a fatal error. */
export function runApiProcess(): void {
  const config = loadConfig();
  const log = createLogger({ service: 'api', level: config.LOG_LEVEL });
  main(config, log).catch((error: unknown) => {
    log.fatal({ err: error }, 'api stopped');
    process.exit(1);
  });
}
