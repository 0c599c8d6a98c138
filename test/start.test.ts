import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../db/schema';
import { freePort, portIsFree } from '../scripts/services/process';
import { apiProcessEnv, eventually, useHarness } from './support/harness';

const h = useHarness({ worker: false });
const home = mkdtempSync(join(tmpdir(), 'drydock-start-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** True while a process of the group is left (signal 0 only asks). */
function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

describe('npm start', () => {
  it('serves the API and the console, runs the worker and seeds the demo with its running drain; Ctrl-C stops it', async () => {
    const port = await freePort();
    // The run's Temporal server (TEMPORAL_ADDRESS: it starts none) and this file's database.
    const child = spawn('npm', ['start', '--silent'], {
      env: {
        ...process.env,
        ...apiProcessEnv(h, port),
        DRYDOCK_HOME: home,
        DRYDOCK_DEMO: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    const lines: LogLine[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) lines.push(JSON.parse(line) as LogLine);
    });
    const exited = once(child, 'exit');
    const said = (msg: string) => lines.find((line) => line.msg.startsWith(msg));
    try {
      const running = await eventually(async () => said('drydock is running'), 120_000, 200);
      expect(running).toMatchObject({
        api: `http://localhost:${port}`,
        console: `http://localhost:${port}/console`,
      });
      // Off a terminal the key stays out of the output.
      expect(JSON.stringify(lines)).not.toContain(h.operatorKey);

      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ready', postgres: true });
      expect((await fetch(`http://127.0.0.1:${port}/console/sign-in`)).status).toBe(200);
      expect(said('seeded the demo fleet: 12 simulated agents joined through the API')).toBeDefined();
      expect(said('demo: drain of ')?.msg).toMatch(/HTTP 202$/);
      // The worker took it: its begin ran.
      const [drain, ...more] = await eventually(async () => {
        const rows = await h.db.select().from(operations);
        return rows[0]?.status === 'running' ? rows : undefined;
      }, 30_000);
      expect(more).toEqual([]);
      expect(drain).toMatchObject({ kind: 'drain', status: 'running' });

      // Ctrl-C: the whole group gets SIGINT. npm ends with it; Drydock stops its parts and exits.
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      await eventually(async () => !groupAlive(child.pid!), 30_000, 200);
      expect(said('stopping')).toBeDefined();
      expect(await portIsFree(port)).toBe(true);
    } finally {
      if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL');
    }
  }, 180_000);
});
