import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import postgres from 'postgres';
import { withDatabase } from './database-url';
import { afterAll, beforeAll, inject } from 'vitest';
import { hashSecret } from '../../domain/secrets';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/env';
import type { RateLimitSettings } from '../../api/rate-limit';
import type { OidcSettings } from '../../api/person-tokens';
import { createAppDeps } from '../../api/deps';
import { generateCa, type ClusterCa } from '../../ca';
import { createDb, type Db } from '../../db/client';
import type { Tracing } from '../../observability/tracing';
import type { Logger } from '../../observability/log';
import { clientInterceptors } from '../../observability/temporal-interceptors';
import { temporalLogger } from '../../observability/temporal-logger';
import { createWorker } from '../../worker';
import { startDispatcher, type Dispatcher } from '../../dispatch/dispatcher';
import { silentLogger } from '../../observability/log';

let runtimeInstalled = false;

/**
 * Limits no ordinary test reaches: every in-process call comes from one address, and the
 * authorization and bad-input tests fail authentication thousands of times on purpose.
 */
const UNREACHABLE_RATE_LIMITS: RateLimitSettings = {
  authFailures: { perMinute: 1e9, burst: 1e9 },
  tokenlessJoins: { perMinute: 1e9, burst: 1e9 },
  trustedProxies: [],
};

export interface Harness {
  db: Db;
  /** The raw driver of `db` (LISTEN, and a dispatcher beside an in-process worker). */
  sql: postgres.Sql;
  databaseUrl: string;
  temporal: Client;
  deps: AppDeps;
  services: ReturnType<typeof createAppDeps>;
  ca: ClusterCa;
  clusterId: string;
  caKeyFile: string;
  app: ReturnType<typeof createApp>;
  taskQueue: string;
  temporalAddress: string;
  operatorKey: string;
  /** The in-process worker; tests that kill workers start their own instead. */
  worker: Worker | null;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
}

/**
 * A fresh database cloned from the migrated template, a Temporal client on the run's server, a
 * task queue of this file's own, an in-process worker (unless `worker: false`) and the Hono app.
 */
export function useHarness(
  options: {
    worker?: boolean;
    heartbeats?: { flushEveryMs?: number; sessionTimeoutMs?: number };
    /** Per-address limits; unset ones are out of reach (tests of the limits set small ones). */
    rateLimits?: Partial<RateLimitSettings>;
    /** The trace pipeline the API, its client and the worker use (read once the file's setup ran). */
    tracing?: () => Tracing;
    /** The API's and the worker's logger (and Temporal's, when this file installs the runtime); unset: silent. */
    log?: Logger;
    /** The OpenID provider the API trusts (read once the file's earlier setup ran); unset: none. */
    oidc?: () => OidcSettings;
  } = {},
): Harness {
  const h = {} as Harness;
  const suffix = randomBytes(4).toString('hex');
  let admin: postgres.Sql;
  let closeDb: () => Promise<void>;
  let connection: Connection;
  let workerConnection: NativeConnection | null = null;
  let running: Promise<void> | null = null;
  let dispatcher: Dispatcher | null = null;

  beforeAll(async () => {
    const templateUrl = inject('templateDatabaseUrl');
    const template = new URL(templateUrl).pathname.slice(1);
    const database = `${template.replace('tpl', 't')}_${suffix}`;
    admin = postgres(withDatabase(templateUrl, 'postgres'), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${database} template ${template}`);
    h.databaseUrl = withDatabase(templateUrl, database);
    const created = createDb(h.databaseUrl);
    h.db = created.db;
    h.sql = created.sql;
    closeDb = created.close;

    h.temporalAddress = inject('temporalAddress');
    const tracing = options.tracing?.() ?? null;
    connection = await Connection.connect({ address: h.temporalAddress });
    h.temporal = new Client({ connection, namespace: 'default', interceptors: clientInterceptors(tracing) });
    h.taskQueue = `test-${suffix}`;
    h.operatorKey = `test-operator-${suffix}-${randomBytes(8).toString('hex')}`;
    h.ca = generateCa();
    h.clusterId = `test-cluster-${suffix}`;
    // Child-process workers (the crash tests) sign with the same key: it is handed over as a file.
    h.caKeyFile = resolve(tmpdir(), `drydock-test-ca-${suffix}.pem`);
    writeFileSync(h.caKeyFile, h.ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), {
      mode: 0o600,
    });
    h.services = createAppDeps({
      db: h.db,
      sql: created.sql,
      log: options.log,
      clusterId: h.clusterId,
      caPrivateKey: h.ca.privateKey,
      caPublicKeyPem: h.ca.publicKeyPem,
      bootstrapKeyHash: hashSecret(h.operatorKey),
      oidc: options.oidc?.(),
      heartbeats: options.heartbeats,
      rateLimits: { ...UNREACHABLE_RATE_LIMITS, ...options.rateLimits },
      tracerProvider: tracing?.provider,
    });
    await h.services.start();
    h.deps = h.services.deps;
    h.app = createApp(h.deps);
    h.worker = null;

    h.startWorker = async () => {
      if (!runtimeInstalled) {
        const logger = options.log ? temporalLogger(options.log) : new DefaultLogger('WARN');
        Runtime.install({ shutdownSignals: [], logger });
        runtimeInstalled = true;
      }
      workerConnection ??= await NativeConnection.connect({ address: h.temporalAddress });
      h.worker = await createWorker({
        connection: workerConnection,
        db: h.db,
        namespace: 'default',
        taskQueue: h.taskQueue,
        log: options.log,
        // The run's bundle has no tracing interceptors: a traced worker bundles its own.
        workflowBundle: tracing ? undefined : { codePath: inject('workflowBundlePath') },
        tracing,
      });
      running = h.worker.run();
      // A worker process runs the outbox's dispatcher beside its worker (worker.ts): so does this one.
      dispatcher = await startDispatcher({
        db: h.db,
        sql: h.sql,
        temporal: h.temporal,
        taskQueue: h.taskQueue,
        log: options.log ?? silentLogger(),
      });
    };
    h.stopWorker = async () => {
      await dispatcher?.stop();
      dispatcher = null;
      if (h.worker && h.worker.getState() === 'RUNNING') h.worker.shutdown();
      await running;
      h.worker = null;
      running = null;
    };
    if (options.worker !== false) await h.startWorker();
  });

  afterAll(async () => {
    await h.stopWorker?.();
    await h.services?.stop();
    await workerConnection?.close();
    await connection?.close();
    await closeDb?.();
    if (h.caKeyFile) rmSync(h.caKeyFile, { force: true });
    const database = new URL(h.databaseUrl).pathname.slice(1);
    await admin?.unsafe(`drop database if exists ${database} with (force)`);
    await admin?.end();
  });

  return h;
}

/** The environment an API process (`entry/api.ts`, `dist/api.js`) needs to serve this file's harness on `port`. */
export function apiProcessEnv(h: Harness, port: number): Record<string, string> {
  return {
    DATABASE_URL: h.databaseUrl,
    TEMPORAL_ADDRESS: h.temporalAddress,
    TEMPORAL_TASK_QUEUE: h.taskQueue,
    PORT: String(port),
    DRYDOCK_CA_KEY_FILE: h.caKeyFile,
    DRYDOCK_CLUSTER_ID: h.clusterId,
    DRYDOCK_BOOTSTRAP_OPERATOR_KEY: h.operatorKey,
  };
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A database of its own, cloned from the run's migrated template, with an API on it that acts as
 * `h`'s (same operator key, CA and cluster id): for tests whose parts must not share an outbox
 * (each worker's dispatcher delivers every row of its database). `close` stops it and drops it.
 */
export async function separateHarness(
  h: Harness,
  taskQueue: string,
): Promise<{ api: Harness; close(): Promise<void> }> {
  const templateUrl = inject('templateDatabaseUrl');
  const template = new URL(templateUrl).pathname.slice(1);
  const database = `${template.replace('tpl', 's')}_${randomBytes(6).toString('hex')}`;
  const admin = postgres(withDatabase(templateUrl, 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${database} template ${template}`);
  const databaseUrl = withDatabase(templateUrl, database);
  const created = createDb(databaseUrl);
  const services = createAppDeps({
    db: created.db,
    sql: created.sql,
    clusterId: h.clusterId,
    caPrivateKey: h.ca.privateKey,
    caPublicKeyPem: h.ca.publicKeyPem,
    bootstrapKeyHash: hashSecret(h.operatorKey),
    rateLimits: UNREACHABLE_RATE_LIMITS,
  });
  await services.start();
  const api: Harness = {
    ...h,
    db: created.db,
    sql: created.sql,
    databaseUrl,
    services,
    deps: services.deps,
    app: createApp(services.deps),
    taskQueue,
    worker: null,
  };
  return {
    api,
    async close() {
      await services.stop();
      await created.close();
      await admin.unsafe(`drop database if exists ${database} with (force)`);
      await admin.end();
    },
  };
}
