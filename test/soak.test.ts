import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist } from '../scripts/build';
import { startProdShape, type ProdShape } from '../scripts/prod-shape';
import { formatResult } from '../scripts/soak/format';
import { runSoak, type SoakResult } from '../scripts/soak/soak';

/** True while a process of that pid exists (signal 0 only asks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// The production shape (Temporal server built from source on Postgres, two APIs and two workers from
// dist/) soaked in quick mode: load across both APIs while each worker, then an API, dies by SIGKILL,
// and Temporal and Postgres restart. `npm run soak` is the long mode.
describe('the production shape under faults (soak, quick mode)', () => {
  const base = resolve('.drydock');
  let home: string;
  let shape: ProdShape;
  let result: SoakResult;
  const pids: number[] = [];

  beforeAll(async () => {
    // Each line says how far into the hook it is, so a slow step shows where the time went.
    const begun = Date.now();
    const log = (line: string) =>
      process.stdout.write(`[soak +${((Date.now() - begun) / 1000).toFixed(1)} s] ${line}\n`);
    mkdirSync(base, { recursive: true });
    home = mkdtempSync(join(base, 'soak-test-'));
    log('building dist/');
    const { outDir } = await buildDist({ outDir: join(home, 'dist') });
    log('starting the production shape');
    shape = await startProdShape({
      apis: 2,
      workers: 2,
      home,
      dist: outDir,
      ports: 'free',
      env: { LOG_LEVEL: 'warn' },
      log,
    });
    result = await runSoak(shape, { mode: 'quick', log });
    process.stdout.write(`${formatResult(result)}\n`);
    pids.push(...[...shape.apis, ...shape.workers].map((p) => p.pid));
    await shape.stop();
  }, 300_000);

  afterAll(async () => {
    await shape?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('ends with every operation terminal, one terminal event each, nothing stale, doubled or stuck', () => {
    expect(result.violations).toEqual([]);
  });

  it('ran every kind of operation, across the faults', () => {
    for (const kind of ['drain', 'decommission', 'purge', 'remediation']) {
      expect(result.operations[kind]?.succeeded ?? 0, kind).toBeGreaterThan(0);
    }
    expect(result.phases.during?.operationsFinished ?? 0).toBeGreaterThan(0);
  });

  it('saw each fault happen, and recovered from each', () => {
    expect(result.faults.map((f) => f.name)).toEqual([
      'SIGKILL worker 1',
      'SIGKILL worker 2',
      'SIGKILL API 1 mid-request',
      'restart Temporal',
      'restart Postgres',
    ]);
    for (const fault of result.faults) {
      expect(fault.happened, `${fault.name}: ${fault.evidence}`).toBe(true);
      expect(fault.recoveryMs, fault.name).toBeGreaterThan(0);
    }
  });

  it('leaves no process running once stopped', () => {
    expect(pids.length).toBe(4);
    expect(pids.filter(alive)).toEqual([]);
  });
});
