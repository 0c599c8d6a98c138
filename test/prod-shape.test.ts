import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listen } from '../api/server';
import { buildDist } from '../scripts/build';
import { startProdShape } from '../scripts/prod-shape';
import { ManagedProcess, waitForOwnReadyz } from '../scripts/services/managed-process';
import { freePort, portIsFree } from '../scripts/services/process';
import { temporalPorts } from '../scripts/services/temporal-cluster';
import { apiProcessEnv, useHarness } from './support/harness';

const h = useHarness({ worker: false });

/** The pids of this test process's children (the `ps` that lists them left out). */
function children(): number[] {
  const ps = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  return ps.stdout
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([pid, ppid]) => ppid === process.pid && pid !== ps.pid)
    .map(([pid]) => pid!);
}

// Another Drydock's API, as `npm start` keeps one: the harness's app served on a port of its own.
let other: Awaited<ReturnType<typeof listen>>;
let home: string;
beforeAll(async () => {
  other = await listen(h.deps, 0);
  mkdirSync(resolve('.drydock'), { recursive: true });
  home = mkdtempSync(join(resolve('.drydock'), 'prod-shape-test-'));
});
afterAll(async () => {
  await closeServer(other.server);
  rmSync(home, { recursive: true, force: true });
});

describe('npm run prod-shape on ports another program holds', () => {
  it('refuses before it starts anything, naming each taken port and what wanted it', async () => {
    // A Temporal server where the shape wants its own, as a running `npm start` has on 7233.
    const temporal = await temporalPorts('free');
    const held = await listen(h.deps, temporal.frontend);
    const before = children();
    const ports = {
      api: other.port,
      workerMetrics: await freePort(),
      temporal: temporal.frontend,
      temporalUi: await freePort(),
      postgres: await freePort(),
    };
    try {
      const refused = await startProdShape({
        home: join(home, 'refused'),
        dist: join(home, 'no-build'),
        ports,
      }).then(
        () => new Error('it started'),
        (error: Error) => error,
      );
      expect(refused.message).toContain(`port ${other.port} is taken (wanted by api-1)`);
      expect(refused.message).toContain(
        `port ${temporal.frontend} is taken (wanted by the Temporal server's frontend (gRPC))`,
      );
      expect(refused.message).toMatch(/PORT, DRYDOCK_WORKER_METRICS_PORT, TEMPORAL_UI_PORT, --temporal-port/);
      // Nothing started, nothing written: no child process, no Postgres, no folder of its own.
      expect(children()).toEqual(before);
      expect(await portIsFree(ports.postgres)).toBe(true);
      expect(existsSync(join(home, 'refused'))).toBe(false);
    } finally {
      await closeServer(held.server);
    }
  });

  it('names two parts that want the same port', async () => {
    const port = await freePort();
    const refused = await startProdShape({
      home: join(home, 'twice'),
      dist: join(home, 'no-build'),
      databaseUrl: h.databaseUrl,
      ports: { api: port, workerMetrics: port - 1 },
    }).catch((error: Error) => error);
    expect((refused as Error).message).toContain(
      `port ${port} is wanted by both worker-2 (/metrics, /readyz) and api-1`,
    );
  });
});

describe('a Drydock process of the shape is ready when it answers, not when its port does', () => {
  let dist: string;
  beforeAll(async () => {
    dist = (await buildDist({ outDir: join(home, 'dist') })).outDir;
    mkdirSync(join(home, 'logs'), { recursive: true });
  }, 120_000);

  const api = (port: number) =>
    new ManagedProcess(
      'api-1',
      join(dist, 'api.js'),
      home,
      { ...apiProcessEnv(h, port), API_PROCESSES: '1' },
      (pid) => waitForOwnReadyz(`http://127.0.0.1:${port}/readyz`, pid, 60_000),
    );

  it('never takes another API answering on its port for its own: it fails with why its process ended', async () => {
    const started = api(other.port);
    const failed = await started.restart().then(
      () => new Error('reported ready'),
      (error: Error) => error,
    );
    expect(failed.message).toMatch(/^api-1 exited with 1 while starting/);
    expect(readFileSync(join(home, 'logs', 'api-1.log'), 'utf8')).toContain('EADDRINUSE');
  });

  it('is ready once its own process answers /readyz', async () => {
    const port = await freePort();
    const started = api(port);
    try {
      await started.restart();
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { process: number }).process).toBe(started.pid);
    } finally {
      await started.stop();
    }
  });
});
