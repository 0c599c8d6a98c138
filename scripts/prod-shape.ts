import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { loadConfig } from '../config';
import { newSecret } from '../domain/secrets';
import { buildDist } from './build';
import { ManagedProcess, waitForOwnReadyz, type DrydockProcess } from './services/managed-process';
import { issueCertificate, type Issued } from './services/pki';
import { freePort, refuseTakenPorts, type WantedPort } from './services/process';
import { startPostgres } from './services/postgres';
import {
  startTemporalCluster,
  temporalPorts,
  wantedTemporalPorts,
  type TemporalCluster,
  type TemporalPorts,
} from './services/temporal-cluster';

const run = promisify(execFile);

export interface ProdShape {
  apiUrls: string[];
  apis: DrydockProcess[];
  workers: DrydockProcess[];
  temporal: TemporalCluster;
  /** Restartable only when the shape started the Postgres itself (no databaseUrl given). */
  postgres: { url: string; restart(): Promise<void> };
  databaseUrl: string;
  operatorKey: string;
  /** The environment every Drydock process got (what compose sets), for the caller's own tools. */
  env: Record<string, string>;
  /** Stops everything it started: workers, APIs, Temporal, Postgres. */
  stop(): Promise<void>;
}

export interface ProdShapeOptions {
  apis?: number;
  workers?: number;
  /** Where its data, config and logs go (each process logs to `<home>/logs/<name>.log`). */
  home: string;
  /** Where the Temporal server binaries are built (DRYDOCK_HOME, default `.drydock`). */
  binaries?: string;
  /** A build (`npm run build`): each process runs `node <dist>/<program>.js`. */
  dist: string;
  /** A Postgres to use for Drydock and Temporal alike; unset: an embedded one of its own. */
  databaseUrl?: string;
  /** Where it listens: `DEFAULT_PORTS` with these changes; 'free': ports nothing listens on, chosen for it. */
  ports?: Partial<ShapePorts> | 'free';
  /** More environment for every Drydock process. */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

/** The production shape's ports (docs/production.md): the Nth API and worker take the base + N - 1. */
export interface ShapePorts {
  /** The first API's (`PORT`); 0: a free port for each API. */
  api: number;
  /** The first worker's `/metrics` and `/readyz` (`DRYDOCK_WORKER_METRICS_PORT`); 0: a free port for each. */
  workerMetrics: number;
  /** The Temporal server's frontend (`--temporal-port`); its other services' ports sit around it. */
  temporal: number;
  /** The Temporal Web UI (`TEMPORAL_UI_PORT`). */
  temporalUi: number;
  /** The embedded Postgres (`--postgres-port`), beside npm start's 54329; unused with a databaseUrl. */
  postgres: number;
}

const CONFIG_DEFAULTS = loadConfig({});
export const DEFAULT_PORTS: ShapePorts = {
  api: CONFIG_DEFAULTS.PORT,
  workerMetrics: CONFIG_DEFAULTS.DRYDOCK_WORKER_METRICS_PORT,
  temporal: 7233,
  temporalUi: CONFIG_DEFAULTS.TEMPORAL_UI_PORT,
  postgres: 54330,
};

/** Says how to move the ports when one is taken. */
const PORT_HINT =
  'stop what listens there, or move the production shape: PORT, DRYDOCK_WORKER_METRICS_PORT, TEMPORAL_UI_PORT, ' +
  '--temporal-port, --postgres-port (docs/production.md)';

/** Every port the shape will listen on, decided before anything starts. */
interface PortPlan {
  /** Null when it uses the Postgres of a databaseUrl. */
  postgres: number | null;
  temporal: TemporalPorts;
  workers: number[];
  apis: number[];
}

async function planPorts(options: ProdShapeOptions): Promise<PortPlan> {
  const free = options.ports === 'free';
  const base = free ? null : { ...DEFAULT_PORTS, ...(options.ports as Partial<ShapePorts> | undefined) };
  // A base of 0 (or 'free'): a free port for each.
  const series = async (first: number | undefined, count: number) => {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(first ? first + i : await freePort());
    return ports;
  };
  return {
    postgres: options.databaseUrl ? null : base ? base.postgres : await freePort(),
    temporal: await temporalPorts(base ? { frontend: base.temporal, ui: base.temporalUi } : 'free'),
    workers: await series(base?.workerMetrics, options.workers ?? 2),
    apis: await series(base?.api, options.apis ?? 2),
  };
}

function wantedPorts(plan: PortPlan): WantedPort[] {
  return [
    ...(plan.postgres === null ? [] : [{ port: plan.postgres, by: 'the embedded Postgres' }]),
    ...wantedTemporalPorts(plan.temporal),
    ...plan.workers.map((port, i) => ({ port, by: `worker-${i + 1} (/metrics, /readyz)` })),
    ...plan.apis.map((port, i) => ({ port, by: `api-${i + 1}` })),
  ];
}

/**
 * The production shape as plain processes: Postgres, a Temporal server on it built from source
 * with its Web UI, `drydock migrate`, then N API processes and M workers from a build — each its
 * own OS process, configured by the environment variables compose sets.
 */
export async function startProdShape(options: ProdShapeOptions): Promise<ProdShape> {
  const log = options.log ?? (() => {});
  // Before anything starts: a port another program holds would answer for one of ours.
  const plan = await planPorts(options);
  await refuseTakenPorts(wantedPorts(plan), PORT_HINT);
  const home = resolve(options.home);
  mkdirSync(join(home, 'logs'), { recursive: true });
  // Run as root, the embedded Postgres runs as its own user, which must reach its data under here
  // (a mkdtemp folder is 0700).
  chmodSync(home, 0o755);
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    const pki = await writeShapePki(join(home, 'tls'));
    log(`certificates made in ${join(home, 'tls')}: a throwaway CA, servers' and client's`);
    const pg = await startPostgres({
      url: options.databaseUrl,
      home,
      port: plan.postgres ?? undefined,
      tls: { server: pki.postgres, caFile: pki.ca.certFile },
    });
    stops.push(() => pg.stop());
    const databaseUrl = pg.url;
    const target = new URL(databaseUrl);
    const caFile = target.searchParams.get('sslrootcert') ?? undefined;
    log(`postgres ready (${pg.source}) at ${target.host}${caFile ? ', TLS (verify-full)' : ''}`);

    const temporal = await startTemporalCluster({
      postgres: {
        host: target.hostname,
        port: Number(target.port || 5432),
        user: decodeURIComponent(target.username),
        password: decodeURIComponent(target.password),
        caFile,
      },
      home: resolve(options.binaries ?? '.drydock'),
      dir: join(home, 'temporal'),
      ports: plan.temporal,
      tls: { ca: pki.ca.certFile, server: pki.temporal, client: pki.client, serverName: 'localhost' },
      log,
    });
    stops.push(() => temporal.stop());
    log(`temporal ready at ${temporal.address}, mTLS${temporal.uiUrl ? `, UI ${temporal.uiUrl}` : ''}`);

    const caKeyFile = join(home, 'ca-key.pem');
    const operatorKey = options.env?.DRYDOCK_BOOTSTRAP_OPERATOR_KEY ?? newSecret('ddo');
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      ...temporal.env,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'drydock',
      DRYDOCK_CLUSTER_ID: 'drydock-prod-shape',
      DRYDOCK_CA_KEY_FILE: caKeyFile,
      DRYDOCK_BOOTSTRAP_OPERATOR_KEY: operatorKey,
      DRYDOCK_DEMO: '0',
      API_PROCESSES: '1',
      LOG_LEVEL: 'info',
      ...(temporal.uiUrl ? { DRYDOCK_TEMPORAL_UI_URL: temporal.uiUrl } : {}),
      ...options.env,
    };
    const cli = (...args: string[]) =>
      run(process.execPath, [join(options.dist, 'drydock.js'), ...args], { env: { ...process.env, ...env } });
    if (!existsSync(caKeyFile)) await cli('ca', 'init', '--out', caKeyFile);
    const migrated = await cli('migrate');
    log(migrated.stdout.trim());

    // Each is ready once its own /readyz answers 200 from the pid it was started as — a worker
    // once it polls, not when its port opens (it can still die in between, when Temporal refuses
    // its start).
    const workers = plan.workers.map(
      (port, i) =>
        new ManagedProcess(
          `worker-${i + 1}`,
          join(options.dist, 'worker.js'),
          home,
          { ...env, DRYDOCK_WORKER_METRICS_PORT: String(port) },
          (pid) => waitForOwnReadyz(`http://127.0.0.1:${port}/readyz`, pid, 120_000),
        ),
    );
    const apis = plan.apis.map((port, i) => {
      const api = new ManagedProcess(
        `api-${i + 1}`,
        join(options.dist, 'api.js'),
        home,
        // One process per API: its /readyz names the pid this script started.
        { ...env, PORT: String(port), API_PROCESSES: '1' },
        (pid) => waitForOwnReadyz(`http://127.0.0.1:${port}/readyz`, pid, 60_000),
      );
      api.url = `http://127.0.0.1:${port}`;
      return api;
    });
    // Stopped in reverse: the APIs first, then the workers (an activity in flight finishes).
    stops.push(() => Promise.all(workers.map((w) => w.stop())).then(() => {}));
    stops.push(() => Promise.all(apis.map((a) => a.stop())).then(() => {}));
    await Promise.all([...workers, ...apis].map((p) => p.restart()));
    log(
      `${workers.length} worker(s) and ${apis.length} API process(es) ready; logs in ${join(home, 'logs')}`,
    );
    return {
      apiUrls: apis.map((a) => a.url!),
      apis,
      workers,
      temporal,
      postgres: { url: databaseUrl, restart: () => pg.restart() },
      databaseUrl,
      operatorKey,
      env,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The shape's certificates: made at every start, by a CA that lives as long as the files. */
export interface ShapePki {
  ca: Issued;
  /** The Temporal frontend's (localhost, 127.0.0.1). */
  temporal: Issued;
  /** Postgres' (127.0.0.1, localhost). */
  postgres: Issued;
  /** What Drydock's processes, and the server's own system worker and UI, present to Temporal. */
  client: Issued;
}

/** A new CA and the certificates it signs, in `dir` (made again at every start), each file 0600. */
export async function writeShapePki(dir: string): Promise<ShapePki> {
  rmSync(dir, { recursive: true, force: true });
  // Traversable: the embedded Postgres runs as its own user (the files in it are 0600).
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const ca = await issueCertificate(dir, 'ca', '/CN=drydock-prod-shape-ca');
  const server = (name: string) =>
    issueCertificate(dir, name, `/CN=${name}`, {
      ca,
      extensions: ['subjectAltName=DNS:localhost,IP:127.0.0.1', 'extendedKeyUsage=serverAuth'],
    });
  return {
    ca,
    temporal: await server('temporal'),
    postgres: await server('postgres'),
    client: await issueCertificate(dir, 'drydock', '/CN=drydock', {
      ca,
      extensions: ['extendedKeyUsage=clientAuth'],
    }),
  };
}

/**
 * `npm run prod-shape [--apis N] [--workers M] [--temporal-port P] [--postgres-port P]`, on the
 * ports PORT, DRYDOCK_WORKER_METRICS_PORT and TEMPORAL_UI_PORT set: builds, starts it all, Ctrl-C
 * stops it all.
 */
async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      apis: { type: 'string' },
      workers: { type: 'string' },
      'temporal-port': { type: 'string' },
      'postgres-port': { type: 'string' },
    },
  });
  const whole = (flag: keyof typeof values, fallback: number, min: number, max: number) => {
    const value = values[flag] === undefined ? fallback : Number(values[flag]);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new Error(`--${flag} takes a whole number from ${min} to ${max}`);
    }
    return value;
  };
  const config = loadConfig();
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const home = resolve(config.DRYDOCK_HOME, 'prod-shape');
  const options = {
    apis: whole('apis', 2, 1, 64),
    workers: whole('workers', 2, 1, 64),
    home,
    databaseUrl: config.DATABASE_URL,
    ports: {
      api: config.PORT,
      workerMetrics: config.DRYDOCK_WORKER_METRICS_PORT,
      temporal: whole('temporal-port', DEFAULT_PORTS.temporal, 1, 65535),
      temporalUi: config.TEMPORAL_UI_PORT,
      postgres: whole('postgres-port', DEFAULT_PORTS.postgres, 1, 65535),
    },
    log: say,
  };
  const started = Date.now();
  const { outDir } = await buildDist();
  say(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const shape = await startProdShape({ ...options, dist: outDir });
  say('');
  say('  The production shape is running.');
  shape.apis.forEach((api) => say(`    ${api.name.padEnd(12)} ${api.url}   (pid ${api.pid})`));
  shape.workers.forEach((worker) => say(`    ${worker.name.padEnd(12)} pid ${worker.pid}`));
  say(`    Temporal     ${shape.temporal.address}`);
  say(`    Temporal UI  ${shape.temporal.uiUrl ?? 'unavailable (the UI server could not be built)'}`);
  say(`    Operator key ${shape.operatorKey}`);
  say(`    Logs         ${join(home, 'logs')}`);
  say('  Ctrl-C stops everything.');
  let stopping = false;
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    void shape.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'prod-shape.ts')) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`prod-shape: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
