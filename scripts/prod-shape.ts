import { spawn, execFile } from 'node:child_process';
import { chmodSync, createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { newSecret } from '../domain/secrets';
import { buildDist } from './build';
import { freePort } from './services/process';
import { startPostgres } from './services/postgres';
import { startTemporalCluster, type TemporalCluster } from './services/temporal-cluster';

const run = promisify(execFile);

/** One Drydock program running as its own OS process, as an orchestrator would keep it. */
export interface DrydockProcess {
  name: string;
  /** The current process's pid (a restart changes it). */
  readonly pid: number;
  /** An API's base URL. */
  url?: string;
  kill(signal?: NodeJS.Signals): void;
  /** The current process's end: its exit code, null when a signal ended it. */
  readonly exited: Promise<number | null>;
  /** Starts the program again (after it died or was killed) and waits until it is ready. */
  restart(): Promise<void>;
  /** The last lines the current process wrote (stdout and stderr), to say why it ended. */
  lastOutput(): string;
}

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
  /** 'default': 8080, 8081… for the APIs, 7233 for Temporal; 'free': ports the kernel picks. */
  ports?: 'default' | 'free';
  /** More environment for every Drydock process. */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

/** Embedded Postgres port of the production shape, beside npm start's 54329. */
const EMBEDDED_PORT = 54330;

/**
 * The production shape as plain processes: Postgres, a Temporal server on it built from source
 * with its Web UI, `drydock migrate`, then N API processes and M workers from a build — each its
 * own OS process, configured by the environment variables compose sets.
 */
export async function startProdShape(options: ProdShapeOptions): Promise<ProdShape> {
  const log = options.log ?? (() => {});
  const free = options.ports === 'free';
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
    const pg = await startPostgres({
      url: options.databaseUrl,
      home,
      port: free ? await freePort() : EMBEDDED_PORT,
    });
    stops.push(() => pg.stop());
    const databaseUrl = pg.url;
    const target = new URL(databaseUrl);
    log(`postgres ready (${pg.source}) at ${target.host}`);

    const temporal = await startTemporalCluster({
      postgres: {
        host: target.hostname,
        port: Number(target.port || 5432),
        user: decodeURIComponent(target.username),
        password: decodeURIComponent(target.password),
      },
      home: resolve(options.binaries ?? '.drydock'),
      dir: join(home, 'temporal'),
      ports: options.ports,
      log,
    });
    stops.push(() => temporal.stop());
    log(`temporal ready at ${temporal.address}${temporal.uiUrl ? `, UI ${temporal.uiUrl}` : ''}`);

    const caKeyFile = join(home, 'ca-key.pem');
    const operatorKey = options.env?.DRYDOCK_BOOTSTRAP_OPERATOR_KEY ?? newSecret('ddo');
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
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

    const workers: ManagedProcess[] = [];
    for (let i = 1; i <= (options.workers ?? 2); i++) {
      const port = free ? await freePort() : 9463 + i;
      workers.push(
        new ManagedProcess(
          `worker-${i}`,
          join(options.dist, 'worker.js'),
          home,
          {
            ...env,
            DRYDOCK_WORKER_METRICS_PORT: String(port),
          },
          // Ready once it polls (its /readyz), not when its port opens: a worker can still die in
          // between, when Temporal refuses its start.
          () => waitForOk(`http://127.0.0.1:${port}/readyz`, 120_000),
        ),
      );
    }
    const apis: ManagedProcess[] = [];
    for (let i = 1; i <= (options.apis ?? 2); i++) {
      const port = free ? await freePort() : 8079 + i;
      const url = `http://127.0.0.1:${port}`;
      apis.push(
        new ManagedProcess(
          `api-${i}`,
          join(options.dist, 'api.js'),
          home,
          { ...env, PORT: String(port) },
          () => waitForOk(`${url}/healthz`, 60_000),
        ),
      );
      apis[apis.length - 1]!.url = url;
    }
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

/** How many lines of a process's output `lastOutput` keeps. */
const TAIL_LINES = 5;

/** A program kept as one child process at a time, its output appended to `<home>/logs/<name>.log`. */
class ManagedProcess implements DrydockProcess {
  url?: string;
  private child: ReturnType<typeof spawn> | null = null;
  private ended: Promise<number | null> = Promise.resolve(null);
  private tail: string[] = [];

  constructor(
    readonly name: string,
    private readonly program: string,
    private readonly home: string,
    private readonly env: Record<string, string>,
    private readonly ready: () => Promise<void>,
  ) {}

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  get exited(): Promise<number | null> {
    return this.ended;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child?.kill(signal);
  }

  async restart(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      throw new Error(`${this.name} is still running (pid ${this.child.pid})`);
    }
    const logFile = createWriteStream(join(this.home, 'logs', `${this.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [this.program], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(logFile, { end: false });
    child.stderr.pipe(logFile, { end: false });
    this.tail = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.tail.push(line);
        if (this.tail.length > TAIL_LINES) this.tail.shift();
      });
    }
    this.child = child;
    this.ended = new Promise((done) =>
      // 'close', not 'exit': by then its output is all read, the last lines too.
      child.once('close', (code) => {
        logFile.end();
        done(code);
      }),
    );
    await Promise.race([
      this.ready(),
      this.ended.then((code) => {
        throw new Error(
          `${this.name} exited with ${code} while starting (log: ${logFile.path}); it last wrote:\n${this.lastOutput()}`,
        );
      }),
    ]);
  }

  lastOutput(): string {
    return this.tail.join('\n');
  }

  /** SIGTERM (the programs shut down gracefully on it), SIGKILL after 15 s. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await this.ended;
    clearTimeout(timer);
  }
}

/** Waits until GET `url` answers 200. */
async function waitForOk(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `npm run prod-shape [--apis N] [--workers M]`: builds, starts it all, Ctrl-C stops it all. */
async function main(argv: string[]): Promise<void> {
  const count = (flag: string, fallback: number) => {
    const at = argv.indexOf(flag);
    const value = at === -1 ? fallback : Number(argv[at + 1]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} takes a whole number of at least 1`);
    return value;
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const home = resolve(process.env.DRYDOCK_HOME ?? '.drydock', 'prod-shape');
  const started = Date.now();
  const { outDir } = await buildDist();
  say(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const shape = await startProdShape({
    apis: count('--apis', 2),
    workers: count('--workers', 2),
    home,
    dist: outDir,
    databaseUrl: process.env.DATABASE_URL,
    log: say,
  });
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
