/**
 * worker-memory: the worker's resident memory with N drains running (waiting on an allocation
 * each), against the same worker idle in the same run (goal: ≤ 500 MB with 1,000 running drains).
 *
 * The worker runs as a process of its own (bench/support/worker-process.ts), as in production, and
 * so does the API. Like worker.ts main, it runs under tsx (its transpiled modules count), bundles
 * its workflows in a child process (unless DRYDOCK_WORKFLOW_BUNDLE names a prebuilt bundle) and
 * caps V8's young generation (`capYoungGeneration`). Its VmRSS (/proc/<pid>/status) is sampled throughout: idle (ready, no drain) for
 * a few seconds first, then while N nodes with one allocation each are drained through the API, and
 * then, once every drain waits, for a steady window. Idle and steady are the medians of their
 * windows; peak is the largest sample from the first drain on.
 */
import { randomBytes } from 'node:crypto';
import { createDb } from '../db/client';
import { hashSecret } from '../domain/secrets';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { startApiProcess } from './support/api-process';
import { apiCaller, drainAndWait, seedNodesWithAllocations } from './support/drains';
import { sleep } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startServices } from './support/services';
import { median, round } from './support/stats';
import type { Teardown } from './support/teardown';
import { connectTemporal } from './support/temporal';
import { startWorkerProcess } from './support/worker-process';

const NAME = 'worker-memory';
const GOAL_BYTES = 500 * 1024 * 1024;
const SAMPLE_EVERY_MS = 250;

const usage = [
  '  --drains N          nodes drained at once, each waiting on one allocation (default 1000, max 5000)',
  '  --idle-seconds I    idle window before the first drain (default 5)',
  '  --steady-seconds S  window once every drain waits (default 15)',
].join('\n');

interface Options {
  drains: number;
  idleSeconds: number;
  steadySeconds: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    drains: { type: 'string' },
    'idle-seconds': { type: 'string' },
    'steady-seconds': { type: 'string' },
  });
  return {
    drains: intOption('drains', values.drains, 1000, 1, 5000),
    idleSeconds: intOption('idle-seconds', values['idle-seconds'], 5, 1, 600),
    steadySeconds: intOption('steady-seconds', values['steady-seconds'], 15, 1, 600),
  };
}

export default defineBenchmark({
  summary: "the worker process' RSS with 1,000 running drains, against the same worker idle",
  usage,
  quick: ['--idle-seconds', '3', '--steady-seconds', '5'],
  run: measured(parseOptions, measure),
});

const mb = (bytes: number) => round(bytes / 1024 / 1024, 1);

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const n = options.drains;
  const loadBefore = environment().loadavg;
  log(`${NAME}: ${n} drains`);
  const services = await startServices(teardown, log);
  const { client } = await connectTemporal(services.temporal.address, teardown);
  const seedDb = createDb(services.databaseUrl, { max: 2 });
  teardown.add('close the seeding pool', () => seedDb.close());
  const suffix = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const taskQueue = `bench-memory-${suffix}`;
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const [api, worker] = await Promise.all([
    startApiProcess(
      {
        databaseUrl: services.databaseUrl,
        temporalAddress: services.temporal.address,
        taskQueue,
        bootstrapKeyHash: hashSecret(operatorKey),
        connections: 10,
      },
      teardown,
    ),
    startWorkerProcess(
      { databaseUrl: services.databaseUrl, temporalAddress: services.temporal.address, taskQueue },
      teardown,
    ),
  ]);
  log(`API process ${api.pid}; worker process ${worker.pid}`);

  // One sampler for the whole run; each window takes the samples between two marks.
  const samples: { at: number; rss: number }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        samples.push({ at: Date.now(), rss: worker.rss() });
      } catch {
        return; // the worker exited: the waits below fail and say so
      }
      await sleep(SAMPLE_EVERY_MS);
    }
  })();
  teardown.add('stop sampling', async () => {
    sampling = false;
    await sampler;
  });
  const between = (from: number, to: number) => samples.filter((s) => s.at >= from && s.at <= to);

  const idleFrom = Date.now();
  await sleep(options.idleSeconds * 1000);
  const idle = between(idleFrom, Date.now()).map((s) => s.rss);

  const call = apiCaller(api.port, operatorKey);
  const pacing = { concurrency: 8 };
  const drainsFrom = Date.now();
  const { nodeIds } = await seedNodesWithAllocations(seedDb.db, call, n, pacing);
  log(`${n} nodes seeded with an allocation each`);
  // The worker's CPU while the drains start: what a heap setting that trades memory for GC costs.
  const cpuBefore = (await worker.stats()).cpu;
  await drainAndWait(client, call, nodeIds, pacing, 60_000 + n * 300);
  const cpuAfter = (await worker.stats()).cpu;
  const cpuPerDrainMs = (cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system) / 1000 / n;
  log(`${n} drains running, each waiting on its allocation`);
  const steadyFrom = Date.now();
  await sleep(options.steadySeconds * 1000);
  const steadyTo = Date.now();
  const steady = between(steadyFrom, steadyTo).map((s) => s.rss);
  const peak = Math.max(...between(drainsFrom, steadyTo).map((s) => s.rss));
  const { maxCachedWorkflows } = await worker.stats();

  const idleRss = median(idle);
  const steadyRss = median(steady);
  const figures: Figure[] = [
    {
      figure: `worker RSS with ${n.toLocaleString('en')} running drains (steady), vs idle`,
      goal: '≤ 500 MB',
      value: `${mb(steadyRss)} MB`,
      baseline: `${mb(idleRss)} MB idle`,
      ratio: round(steadyRss / idleRss),
      met: steadyRss <= GOAL_BYTES,
    },
    {
      figure: `worker peak RSS while ${n.toLocaleString('en')} drains start`,
      goal: '≤ 500 MB',
      value: `${mb(peak)} MB`,
      baseline: `${mb(idleRss)} MB idle`,
      ratio: round(peak / idleRss),
      met: peak <= GOAL_BYTES,
    },
    {
      figure: `worker CPU per drain started (begin and first look), ${n.toLocaleString('en')} drains`,
      goal: '— (reported)',
      value: `${round(cpuPerDrainMs, 2)} ms`,
      baseline: '—',
      ratio: null,
      met: true,
    },
  ];
  const environ = environment();
  console.log(
    [
      '',
      `${NAME}: ${n} running drains; worker maxCachedWorkflows ${maxCachedWorkflows}; ` +
        `${environ.cpus} CPUs, load ${loadBefore.join(' ')} before, ${environ.loadavg.join(' ')} after`,
      '',
      formatTable(
        ['worker RSS', 'samples', 'MB'],
        [
          ['idle (median)', idle.length, mb(idleRss)],
          [`${n} drains, peak`, between(drainsFrom, steadyTo).length, mb(peak)],
          [`${n} drains, steady (median)`, steady.length, mb(steadyRss)],
        ],
      ),
      '',
      `worker CPU per drain started: ${round(cpuPerDrainMs, 2)} ms`,
    ].join('\n'),
  );
  const path = writeResult(NAME, {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    environment: { ...environ, loadavgBefore: loadBefore },
    services,
    workerMaxCachedWorkflows: maxCachedWorkflows,
    rssBytes: { idle: idleRss, peak, steady: steadyRss },
    workerCpuPerDrainMs: round(cpuPerDrainMs, 3),
    figures,
  });
  console.log(`\nwrote ${path}`);
  return 0;
}
