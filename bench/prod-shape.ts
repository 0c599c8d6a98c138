/**
 * prod-shape: drains per second, and CPU per drain, of the production shape run as processes
 * (scripts/prod-shape.ts: a Temporal server built from source on Postgres, API processes and
 * workers from dist/) with 1 API + 1 worker against 2 APIs + 2 workers, on this machine, in the
 * same run (issue 16).
 *
 * Each side is a shape of its own on ports the kernel picks, with a fresh embedded Postgres. N
 * adopted nodes are written to its database, each given one allocation through the API; then,
 * measured, every node goes through a whole drain — POST drain, release its allocation, until the
 * operation has succeeded — C nodes at a time, the calls spread over the side's APIs. Throughput is
 * N over the time from the first drain to the last success (read from the operations table). CPU
 * is every process of the shape (APIs, workers, the Temporal server, Postgres and its backends),
 * read from /proc, over the same window. Sides alternate in rounds, the order turned each round, so
 * drift of this shared machine falls on both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { createDb } from '../db/client';
import { operations } from '../db/schema';
import { buildDist } from '../scripts/build';
import { startProdShape } from '../scripts/prod-shape';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { descendantsCpuSeconds } from './support/cpu';
import { apiCaller, seedNodesWithAllocations, type ApiCall } from './support/drains';
import { paced, until } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { round } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'prod-shape';
const projectRoot = fileURLToPath(new URL('../', import.meta.url));

const usage = [
  '  --drains N        drains per side and round (default 300)',
  '  --concurrency C   nodes in their drain cycle at once (default 16)',
  '  --rounds R        rounds; each runs both sides, the order turned each round (default 2)',
].join('\n');

interface Options {
  drains: number;
  concurrency: number;
  rounds: number;
}

function parse(args: string[]): Options {
  const values = optionValues(args, {
    drains: { type: 'string' },
    concurrency: { type: 'string' },
    rounds: { type: 'string' },
  });
  return {
    drains: intOption('drains', values.drains, 300, 1, 100_000),
    concurrency: intOption('concurrency', values.concurrency, 16, 1, 1_000),
    rounds: intOption('rounds', values.rounds, 2, 1, 20),
  };
}

interface Side {
  apis: number;
  workers: number;
}

interface Sample {
  seconds: number;
  cpuSeconds: number;
}

async function runSide(side: Side, options: Options, dist: string, log: Log): Promise<Sample> {
  const home = mkdtempSync(join(projectRoot, '.drydock', 'bench-prod-shape-'));
  const shape = await startProdShape({ ...side, home, dist, ports: 'free', env: { LOG_LEVEL: 'warn' } });
  const { db, close } = createDb(shape.databaseUrl, { max: 2 });
  try {
    const calls: ApiCall[] = shape.apiUrls.map((url) =>
      apiCaller(Number(new URL(url).port), shape.operatorKey),
    );
    const { nodeIds, allocationOf } = await seedNodesWithAllocations(db, calls[0]!, options.drains, {
      concurrency: 8,
    });
    const cpuBefore = descendantsCpuSeconds(process.pid);
    const started = performance.now();
    await paced(nodeIds, { concurrency: options.concurrency }, async (nodeId, index) => {
      const call = calls[index % calls.length]!;
      const drain = await call('POST', `/v1/nodes/${nodeId}/drain`, { reason: 'bench' });
      if (drain.status !== 202) throw new Error(`drain: ${drain.status} ${JSON.stringify(drain.body)}`);
      const release = await call('POST', `/v1/allocations/${allocationOf.get(nodeId)}/release`);
      if (release.status !== 200)
        throw new Error(`release: ${release.status} ${JSON.stringify(release.body)}`);
    });
    await until(
      'every drain succeeded',
      async () => {
        const [row] = await db
          .select({ n: sql<number>`count(*)::int` })
          .from(operations)
          .where(
            and(
              eq(operations.kind, 'drain'),
              eq(operations.status, 'succeeded'),
              inArray(operations.nodeId, nodeIds),
            ),
          );
        return (row?.n ?? 0) === nodeIds.length;
      },
      600_000,
      100,
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuSeconds = descendantsCpuSeconds(process.pid) - cpuBefore;
    log(
      `${side.apis}+${side.workers}: ${options.drains} drains in ${seconds.toFixed(1)} s, ` +
        `${(options.drains / seconds).toFixed(1)}/s, ${((cpuSeconds / options.drains) * 1000).toFixed(0)} ms CPU per drain`,
    );
    return { seconds, cpuSeconds };
  } finally {
    await close();
    await shape.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

async function measure(options: Options, _teardown: Teardown, log: Log): Promise<number> {
  log('building dist/');
  const { outDir } = await buildDist({ outDir: join(projectRoot, '.drydock', 'bench-dist') });
  const sides: Side[] = [
    { apis: 1, workers: 1 },
    { apis: 2, workers: 2 },
  ];
  const samples = sides.map(() => [] as Sample[]);
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) samples[i]!.push(await runSide(sides[i]!, options, outDir, log));
  }
  const totals = samples.map((list) => ({
    perSecond: (options.drains * list.length) / list.reduce((s, x) => s + x.seconds, 0),
    cpuMsPerDrain: (list.reduce((s, x) => s + x.cpuSeconds, 0) / (options.drains * list.length)) * 1000,
  }));
  const [one, two] = totals as [(typeof totals)[0], (typeof totals)[0]];
  const ratio = two.perSecond / one.perSecond;
  const figures: Figure[] = [
    {
      figure: `drains/s, 2 APIs + 2 workers vs 1 + 1 (prod shape, ${options.drains} drains × ${options.rounds})`,
      goal: 'reported',
      value: `${round(two.perSecond, 1)} drains/s (${round(two.cpuMsPerDrain, 0)} ms CPU/drain)`,
      baseline: `${round(one.perSecond, 1)} drains/s (${round(one.cpuMsPerDrain, 0)} ms CPU/drain)`,
      ratio: round(ratio, 2),
      met: true,
    },
  ];
  console.log(
    formatTable(
      ['shape', 'drains/s', 'CPU per drain', 'runs'],
      sides.map((side, i) => [
        `${side.apis} API + ${side.workers} worker`,
        round(totals[i]!.perSecond, 1),
        `${round(totals[i]!.cpuMsPerDrain, 0)} ms`,
        samples[i]!.map((s) => `${s.seconds.toFixed(1)} s`).join(', '),
      ]),
    ),
  );
  console.log(
    `\n2+2 ÷ 1+1: ${ratio.toFixed(2)}× (cores: ${cpus().length}, load ${loadavg()[0]!.toFixed(1)})`,
  );
  writeResult(NAME, { environment: environment(), options, sides, samples, figures });
  return 0;
}

export default defineBenchmark({
  summary: 'drains/s and CPU per drain of the production shape, 2 APIs + 2 workers vs 1 + 1',
  usage,
  quick: ['--drains', '100', '--rounds', '1'],
  run: measured(parse, measure),
});
