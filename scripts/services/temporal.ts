import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { goInstall, type GoBuildStatus } from './go-install';
import { refuseTakenPorts, spawnService, waitForPort } from './process';

const run = promisify(execFile);

/** The Temporal CLI release that installs from the Go module proxy (`go install`). */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export interface TemporalServer {
  address: string;
  uiUrl: string | null;
  /** How the server was had: an existing cluster, a CLI found, a CLI just built, or the SDK's. */
  source: 'existing' | 'cli' | 'built' | 'sdk';
  stop(): Promise<void>;
}

export interface TemporalOptions {
  address?: string;
  cli?: string;
  home: string;
  port?: number;
  uiPort?: number;
  /** A persistent database file; omitted, the dev server keeps everything in memory. */
  dbFile?: string;
  /** No Web UI (test servers). */
  headless?: boolean;
  log?: (line: string) => void;
  /** The progress of a build of the CLI, when one is needed (every second); unset: a line every 30 s. */
  buildProgress?: (status: GoBuildStatus) => void;
  /** Stops a build of the CLI under way. */
  signal?: AbortSignal;
}

/** The dev server's port unless `port` says otherwise. */
const DEV_SERVER_PORT = 7233;

/** Where the server `startTemporal(options)` gives will answer, known before it is up. */
export function temporalAddressOf(options: TemporalOptions): string {
  return options.address ?? `127.0.0.1:${options.port ?? DEV_SERVER_PORT}`;
}

/** The Web UI of the server `startTemporal(options)` gives; null for an existing one or a headless one. */
export function temporalUiUrlOf(options: TemporalOptions): string | null {
  return options.address || options.headless ? null : `http://localhost:${uiPortOf(options)}`;
}

const uiPortOf = (options: TemporalOptions) => options.uiPort ?? (options.port ?? DEV_SERVER_PORT) + 1000;

/**
 * The one way Drydock gets a Temporal server, used by `npm start` and the tests alike:
 * TEMPORAL_ADDRESS → a `temporal` CLI (TEMPORAL_CLI, PATH, .drydock/bin) → `go install` it →
 * the SDK's download.
 */
export async function startTemporal(options: TemporalOptions): Promise<TemporalServer> {
  const log = options.log ?? (() => {});
  if (options.address) {
    return { address: options.address, uiUrl: null, source: 'existing', stop: async () => {} };
  }
  const found = await findCli(options);
  const cli = found ?? (await buildCli(options, log));
  if (cli) return startDevServer(cli, found ? 'cli' : 'built', options);
  log('no temporal CLI and no Go toolchain: using the SDK test server download');
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: '127.0.0.1',
      port: options.port ?? DEV_SERVER_PORT,
      ui: !options.headless,
      uiPort: uiPortOf(options),
    },
  });
  return {
    address: env.address,
    uiUrl: temporalUiUrlOf(options),
    source: 'sdk',
    stop: () => env.teardown(),
  };
}

async function findCli(options: TemporalOptions): Promise<string | null> {
  if (options.cli) return options.cli;
  try {
    const { stdout } = await run('sh', ['-c', 'command -v temporal']);
    if (stdout.trim()) return stdout.trim();
  } catch {
    // not on PATH
  }
  const cached = resolve(options.home, 'bin', 'temporal');
  return existsSync(cached) ? cached : null;
}

async function buildCli(options: TemporalOptions, log: (line: string) => void): Promise<string | null> {
  try {
    await run('go', ['version']);
  } catch {
    return null;
  }
  const bin = resolve(options.home, 'bin');
  await goInstall([TEMPORAL_CLI_MODULE], {
    what: `the Temporal CLI (${TEMPORAL_CLI_MODULE})`,
    bin,
    log,
    progress: options.buildProgress,
    signal: options.signal,
  });
  return join(bin, 'temporal');
}

async function startDevServer(
  cli: string,
  source: 'cli' | 'built',
  options: TemporalOptions,
): Promise<TemporalServer> {
  const port = options.port ?? DEV_SERVER_PORT;
  const uiPort = uiPortOf(options);
  await refuseTakenPorts(
    [
      { port, by: 'the Temporal dev server' },
      ...(options.headless ? [] : [{ port: uiPort, by: 'its Web UI (TEMPORAL_UI_PORT)' }]),
    ],
    'stop what runs there, or set TEMPORAL_ADDRESS to use a Temporal server that runs',
  );
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    ...(options.headless ? ['--headless'] : ['--ui-port', String(uiPort)]),
    '--log-level',
    'warn',
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=NORMAL',
    // Off by default in the server; lets a worker run an activity it just scheduled without a poll.
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
  ];
  if (options.dbFile) {
    mkdirSync(resolve(options.dbFile, '..'), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  const service = spawnService(cli, args);
  try {
    await Promise.race([
      waitForPort('127.0.0.1', port, 60_000),
      service.exited.then((code) => {
        throw new Error(`temporal server exited with ${code}: ${service.lastStderr()}`);
      }),
    ]);
  } catch (error) {
    await service.stop();
    throw error;
  }
  return {
    address: temporalAddressOf(options),
    uiUrl: temporalUiUrlOf(options),
    source,
    stop: () => service.stop(),
  };
}
