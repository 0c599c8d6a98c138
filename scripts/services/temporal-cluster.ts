import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporalConnection } from '../../temporal-connection';
import { goInstall } from './go-install';
import type { Issued } from './pki';
import { portIsFree, spawnService, waitForPort, type WantedPort } from './process';

const run = promisify(execFile);

/** The Temporal server release Drydock runs in production: the one the CLI v1.5.1 embeds. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const SERVER_MODULE = 'go.temporal.io/server';
/** The Web UI server the CLI v1.5.1 embeds, with its assets. */
const UI_MODULE = 'github.com/temporalio/ui-server/v2';
const UI_VERSION = 'v2.42.1';

export interface TemporalServerBinaries {
  server: string;
  /** The SQL schema tool (temporal-sql-tool in Temporal's images). */
  sqlTool: string;
  /** The module's schema/postgresql/v12 folder: the versioned schemas the SQL tool applies. */
  schemaDir: string;
  /** The Web UI server, when it could be built; null otherwise. */
  ui: string | null;
}

/**
 * The Temporal server, its SQL tool and its Web UI, built from the Go module proxy into
 * `<home>/temporal-server-<version>/` (and `temporal-ui-<version>/`) when missing. The first build
 * takes minutes; its progress is logged every 30 s, and its time.
 */
export async function ensureTemporalServer(
  home: string,
  log: (line: string) => void = () => {},
): Promise<TemporalServerBinaries> {
  const serverDir = resolve(home, `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  const server = join(serverDir, 'server');
  const sqlTool = join(serverDir, 'sql');
  if (!existsSync(server) || !existsSync(sqlTool)) {
    await goInstall(
      [`${SERVER_MODULE}/cmd/server`, `${SERVER_MODULE}/cmd/tools/sql`].map(
        (pkg) => `${pkg}@${TEMPORAL_SERVER_VERSION}`,
      ),
      { what: `the Temporal server ${TEMPORAL_SERVER_VERSION}`, bin: serverDir, log },
    );
  }
  const uiDir = resolve(home, `temporal-ui-${UI_VERSION}`);
  let ui: string | null = join(uiDir, 'server');
  if (!existsSync(ui)) {
    try {
      await goInstall([`${UI_MODULE}/cmd/server@${UI_VERSION}`], {
        what: `the Temporal UI ${UI_VERSION}`,
        bin: uiDir,
        log,
      });
    } catch (error) {
      log(`the Temporal UI could not be built, running without it: ${(error as Error).message}`);
      ui = null;
    }
  }
  const { stdout } = await run('go', [
    'mod',
    'download',
    '-json',
    `${SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`,
  ]);
  const { Dir } = JSON.parse(stdout) as { Dir: string };
  return { server, sqlTool, schemaDir: join(Dir, 'schema', 'postgresql', 'v12'), ui };
}

/** Where the server keeps its two stores. The databases are made when missing. */
export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Over TLS, the server's certificate checked against this CA and the host (verify-full). */
  caFile?: string;
}

/**
 * The frontend's TLS: its certificate, and mTLS — it takes only clients whose certificate `ca`
 * signed. `client` is the certificate its own system worker and the Web UI present, and the one
 * the cluster's `env` hands to Drydock's processes.
 */
export interface TemporalClusterTls {
  ca: string;
  server: Issued;
  client: Issued;
  /** The name the server's certificate carries. */
  serverName: string;
}

export interface TemporalClusterOptions {
  postgres: PostgresTarget;
  /** Where the binaries are built (DRYDOCK_HOME): they outlive any one cluster. */
  home: string;
  /** Where this cluster's config is written. */
  dir: string;
  namespace?: string;
  /** Where the server and its UI listen (`temporalPorts`); the caller checks they are free. */
  ports: TemporalPorts;
  /** Unset: the frontend serves plain gRPC. */
  tls?: TemporalClusterTls;
  log?: (line: string) => void;
}

export interface TemporalCluster {
  address: string;
  /** What a client of it sets: TEMPORAL_ADDRESS and, with TLS, TEMPORAL_TLS_* (temporal-connection.ts). */
  env: Record<string, string>;
  uiUrl: string | null;
  /** Stops the server and starts it again on the same ports and config (the soak's fault). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The ports of a Temporal server's four services and of its Web UI. */
export interface TemporalPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: [number, number, number, number];
  ui: number;
}

/** Temporal's own layout around its frontend's 7233: the other services' ports, as offsets from it. */
const OFFSETS = {
  frontendHttp: 10,
  history: 1,
  matching: 2,
  worker: 6,
  membership: [-300, -299, -298, -294],
};
/** The server records membership ports in a Postgres smallint: they must stay under 32768. */
const FRONTEND_RANGE = [-OFFSETS.membership[0]! + 1, 32_767 - OFFSETS.membership[3]!] as const;

/**
 * The server's ports laid out as Temporal's defaults are around 7233 (HTTP 7243, history 7234,
 * matching 7235, worker 7239, membership 6933–6935 and 6939), around `frontend`, and the UI on
 * `ui`; or, with 'free', ports nothing listens on, each chosen at random.
 */
export async function temporalPorts(base: { frontend: number; ui: number } | 'free'): Promise<TemporalPorts> {
  if (base !== 'free') {
    const f = base.frontend;
    if (!Number.isInteger(f) || f < FRONTEND_RANGE[0] || f > FRONTEND_RANGE[1]) {
      throw new Error(
        `the Temporal server's port must be a whole number from ${FRONTEND_RANGE[0]} to ${FRONTEND_RANGE[1]} ` +
          `(its membership ports sit 300 below it and must stay under 32768): ${f}`,
      );
    }
    const [a, b, c, d] = OFFSETS.membership.map((offset) => f + offset) as TemporalPorts['membership'];
    return {
      frontend: f,
      frontendHttp: f + OFFSETS.frontendHttp,
      history: f + OFFSETS.history,
      matching: f + OFFSETS.matching,
      worker: f + OFFSETS.worker,
      membership: [a, b, c, d],
      ui: base.ui,
    };
  }
  const taken = new Set<number>();
  const next = async () => {
    const port = await freeLowPort(taken);
    taken.add(port);
    return port;
  };
  return {
    frontend: await next(),
    frontendHttp: await next(),
    history: await next(),
    matching: await next(),
    worker: await next(),
    membership: [await next(), await next(), await next(), await next()],
    ui: await next(),
  };
}

/** Each port of the server and its UI with what wants it, for a refusal's words. */
export function wantedTemporalPorts(ports: TemporalPorts): WantedPort[] {
  const server = "the Temporal server's";
  const member = ['frontend', 'history', 'matching', 'worker'] as const;
  return [
    { port: ports.frontend, by: `${server} frontend (gRPC)` },
    { port: ports.frontendHttp, by: `${server} frontend (HTTP)` },
    { port: ports.history, by: `${server} history service` },
    { port: ports.matching, by: `${server} matching service` },
    { port: ports.worker, by: `${server} worker service` },
    ...ports.membership.map((port, i) => ({ port, by: `${server} ${member[i]} membership` })),
    { port: ports.ui, by: 'the Temporal Web UI' },
  ];
}

/**
 * A free port under 32768. The server records its hosts' membership ports in a Postgres smallint
 * column, and the kernel's own choice (32768–60999 on Linux) is out of its range.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 22_000);
    if (!taken.has(port) && (await portIsFree(port))) return port;
  }
}

/**
 * Dynamic config: what Drydock relies on that the server leaves off by default — activity eager
 * execution (the tests' dev server sets it too).
 */
const DYNAMIC_CONFIG = {
  'system.enableActivityEagerExecution': [{ value: true }],
  'limit.maxIDLength': [{ value: 255 }],
};

/** The server's config (YAML is a superset of JSON, so it is written as JSON). */
function serverConfig(
  postgres: PostgresTarget,
  ports: TemporalPorts,
  dynamicConfigFile: string,
  tls: TemporalClusterTls | undefined,
) {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${postgres.host}:${postgres.port}`,
      connectProtocol: 'tcp',
      user: postgres.user,
      password: postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
      ...(postgres.caFile
        ? { tls: { enabled: true, caFile: postgres.caFile, enableHostVerification: true } }
        : {}),
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: object = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: 4,
      datastores: { default: store('temporal', 20), visibility: store('temporal_visibility', 4) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      ...(tls ? { tls: frontendTls(tls) } : {}),
    },
    services: {
      frontend: service(ports.frontend, ports.membership[0], { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.membership[1]),
      matching: service(ports.matching, ports.membership[2]),
      worker: service(ports.worker, ports.membership[3]),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
}

/**
 * mTLS on the frontend, the one service clients reach (the others talk among themselves on
 * loopback); the server's system worker is a client of it like any other.
 */
function frontendTls(tls: TemporalClusterTls) {
  const client = { serverName: tls.serverName, rootCaFiles: [tls.ca] };
  return {
    frontend: {
      server: {
        certFile: tls.server.certFile,
        keyFile: tls.server.keyFile,
        requireClientAuth: true,
        clientCaFiles: [tls.ca],
      },
      client,
    },
    systemWorker: { certFile: tls.client.certFile, keyFile: tls.client.keyFile, client },
  };
}

/** What a client of the server sets (temporal-connection.ts reads it). */
function clientEnv(address: string, tls: TemporalClusterTls | undefined): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: address,
    ...(tls
      ? {
          TEMPORAL_TLS_CA: tls.ca,
          TEMPORAL_TLS_CERT: tls.client.certFile,
          TEMPORAL_TLS_KEY: tls.client.keyFile,
          TEMPORAL_TLS_SERVER_NAME: tls.serverName,
        }
      : {}),
  };
}

/**
 * Both stores' databases and schemas, as Temporal's own compose does it with temporal-sql-tool:
 * create (an existing database is accepted), setup-schema -v 0.0, update-schema to the newest
 * versioned schema. Running it again on a set-up database changes nothing.
 */
export async function setupTemporalSchemas(
  binaries: TemporalServerBinaries,
  postgres: PostgresTarget,
): Promise<void> {
  for (const [database, folder] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const tool = (...args: string[]) =>
      run(
        binaries.sqlTool,
        [
          '--plugin',
          'postgres12',
          '--ep',
          postgres.host,
          '-p',
          String(postgres.port),
          '-u',
          postgres.user,
          '--pw',
          postgres.password,
          '--db',
          database,
          ...(postgres.caFile ? ['--tls', '--tls-ca-file', postgres.caFile] : []),
          ...args,
        ],
        { maxBuffer: 16 * 1024 * 1024 },
      );
    await tool('create');
    await tool('setup-schema', '-v', '0.0');
    await tool('update-schema', '-d', join(binaries.schemaDir, folder, 'versioned'));
  }
}

/**
 * A Temporal server on Postgres, built from source: its schemas applied, its config written under
 * `dir`, the namespace registered, and its Web UI when that could be built.
 */
export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const log = options.log ?? (() => {});
  const namespace = options.namespace ?? 'default';
  const binaries = await ensureTemporalServer(options.home, log);
  await setupTemporalSchemas(binaries, options.postgres);
  const ports = options.ports;
  const root = resolve(options.dir);
  mkdirSync(join(root, 'config'), { recursive: true });
  const dynamicConfigFile = join(root, 'config', 'dynamic.yaml');
  writeFileSync(dynamicConfigFile, JSON.stringify(DYNAMIC_CONFIG, null, 2));
  writeFileSync(
    join(root, 'config', 'drydock.yaml'),
    JSON.stringify(serverConfig(options.postgres, ports, dynamicConfigFile, options.tls), null, 2),
  );
  const address = `127.0.0.1:${ports.frontend}`;
  const env = clientEnv(address, options.tls);

  let server: ReturnType<typeof spawnService> | null = null;
  const startServer = async () => {
    const started = spawnService(
      binaries.server,
      ['--root', root, '--config', 'config', '--env', 'drydock', '--allow-no-auth', 'start'],
      { logFile: join(root, 'server.log') },
    );
    server = started;
    await untilServing(started, 'the Temporal server', async () => {
      await waitForPort('127.0.0.1', ports.frontend, 120_000);
      await ensureNamespace(env, namespace, 120_000);
    });
  };

  let ui: ReturnType<typeof spawnService> | null = null;
  try {
    await startServer();
    if (binaries.ui) {
      const uiConfig = join(root, 'ui-config');
      mkdirSync(uiConfig, { recursive: true });
      writeFileSync(
        join(uiConfig, 'drydock.yaml'),
        JSON.stringify({
          temporalGrpcAddress: address,
          port: ports.ui,
          enableUi: true,
          defaultNamespace: namespace,
          ...(options.tls
            ? {
                tls: {
                  caFile: options.tls.ca,
                  certFile: options.tls.client.certFile,
                  keyFile: options.tls.client.keyFile,
                  serverName: options.tls.serverName,
                  enableHostVerification: true,
                },
              }
            : {}),
        }),
      );
      ui = spawnService(binaries.ui, ['--root', root, '--config', 'ui-config', '--env', 'drydock', 'start'], {
        logFile: join(root, 'ui.log'),
      });
      const started = ui;
      await untilServing(started, 'the Temporal Web UI', () => waitForPort('127.0.0.1', ports.ui, 30_000));
    }
  } catch (error) {
    await ui?.stop();
    await (server as ReturnType<typeof spawnService> | null)?.stop();
    throw error;
  }
  return {
    address,
    env,
    uiUrl: ui ? `http://localhost:${ports.ui}` : null,
    async restart() {
      await server?.stop();
      await startServer();
    },
    async stop() {
      await ui?.stop();
      await server?.stop();
    },
  };
}

/**
 * Runs `serving` (the service's port answers, …) while the service runs, and checks it still runs
 * after: a port its caller saw free and that now answers is then the service's own, not another's
 * that the service failed to bind beside.
 */
async function untilServing(
  service: ReturnType<typeof spawnService>,
  what: string,
  serving: () => Promise<void>,
): Promise<void> {
  const exited = () => new Error(`${what} exited with ${service.child.exitCode}: ${service.lastStderr()}`);
  await Promise.race([
    serving(),
    service.exited.then(() => {
      throw exited();
    }),
  ]);
  if (service.child.exitCode !== null || service.child.signalCode !== null) throw exited();
}

/** Registers `namespace` unless it exists, retrying while the server is still starting. */
async function ensureNamespace(
  env: Record<string, string>,
  namespace: string,
  timeoutMs: number,
): Promise<void> {
  const { options } = temporalConnection(env)!;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ ...options, connectTimeout: 5_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace }).catch(async (error: unknown) => {
          if ((error as { code?: number }).code !== 5) throw error; // 5: NOT_FOUND
          await connection.workflowService.registerNamespace({
            namespace,
            workflowExecutionRetentionPeriod: msToTs('3 days'),
          });
        });
        // A namespace just registered reaches the frontend's namespace cache seconds later; until
        // then a call naming it (a worker's poll, a start) is refused. Listing goes through that cache.
        await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
