/**
 * pool-drain: how fast a pool drain starts its node drains, against the bare rate at which empty
 * workflows are started on the same Temporal server (goal: at least 0.7× of it, the median of 5
 * rounds).
 *
 * Each round drains a pool of N nodes without allocations by one `POST /v1/pools/{id}/drain` with
 * maxConcurrent N, so nothing but the pool drain itself paces its node drains: each wave requests
 * up to POOL_DRAIN_WAVE node drains (a transaction per node, each writing its start to the outbox)
 * and the worker's dispatcher starts them, a batch of its claims side by side. Every node drain's
 * start time is read from Temporal (its workflow's start time); the rate is starts per second from
 * the first to the last. The baseline, in the same round: N empty workflows started by the same
 * client calls, as many in flight at once as the dispatcher claims in one pass, timed the same way.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { createApp } from '../api/app';
import { createAppDeps } from '../api/deps';
import { generateCa } from '../ca';
import { createDb } from '../db/client';
import { nodes, pools } from '../db/schema';
import { startDispatcher } from '../dispatch/dispatcher';
import { newId } from '../domain/ids';
import { hashSecret } from '../domain/secrets';
import { silentLogger } from '../observability/log';
import { createWorker, workflowBundleSources } from '../worker';
import { drainWorkflowId, poolDrainWorkflowId } from '../workflows/definitions';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Log,
  type Figure,
} from './support/benchmark';
import { paced } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startServices } from './support/services';
import { round } from './support/stats';
import type { Teardown } from './support/teardown';
import { connectTemporal } from './support/temporal';
import { empty } from './workflows/baseline';

const NAME = 'pool-drain';
const baselinePath = fileURLToPath(new URL('./workflows/baseline.ts', import.meta.url));
/** As many empty starts in flight as the dispatcher claims and starts in one pass (dispatch/). */
const IN_FLIGHT = 200;
/** Node drain starts per second, at least this share of the bare empty-workflow start rate. */
const GOAL_RATIO = 0.7;

const usage = [
  '  --nodes N    nodes of each round’s pool, none holding an allocation, all drained at once',
  '               (default 500, max 5000)',
  '  --rounds K   rounds, each a pool drain and its baseline (default 5); the figure is the median ratio',
].join('\n');

interface Options {
  nodes: number;
  rounds: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, { nodes: { type: 'string' }, rounds: { type: 'string' } });
  return {
    nodes: intOption('nodes', values.nodes, 500, 2, 5000),
    rounds: intOption('rounds', values.rounds, 5, 1, 20),
  };
}

export default defineBenchmark({
  summary: 'node drain start rate of a pool drain, against empty workflow starts on the same server',
  usage,
  quick: ['--nodes', '200', '--rounds', '5'],
  run: measured(parseOptions, measure),
});

/** Starts per second from the first start to the last. */
function rate(starts: number[]): number {
  const span = Math.max(...starts) - Math.min(...starts);
  return span > 0 ? round(((starts.length - 1) * 1000) / span, 1) : Infinity;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Round {
  children: number;
  empty: number;
  ratio: number;
  firstChildMs: number;
  poolDrainMs: number;
  outcome: unknown;
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const n = options.nodes;
  log(`${NAME}: ${options.rounds} rounds of ${n} nodes`);
  const quiet = { log: () => {}, trace: () => {}, debug: () => {}, info: () => {}, warn: log, error: log };
  const [services, drainBundle, baselineBundle] = await Promise.all([
    startServices(teardown, log),
    bundleWorkflowCode({ ...workflowBundleSources(false), logger: quiet }),
    bundleWorkflowCode({ workflowsPath: baselinePath, logger: quiet }),
  ]);
  const { native, client } = await connectTemporal(services.temporal.address, teardown);
  const apiDb = createDb(services.databaseUrl);
  const workerDb = createDb(services.databaseUrl);
  teardown.add('close the database pools', () => Promise.all([apiDb.close(), workerDb.close()]));

  const suffix = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const drainQueue = `bench-pool-drain-${suffix}`;
  const baselineQueue = `bench-baseline-${suffix}`;
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const ca = generateCa();
  const api = createAppDeps({
    db: apiDb.db,
    sql: apiDb.sql,
    clusterId: 'bench',
    caPrivateKey: ca.privateKey,
    caPublicKeyPem: ca.publicKeyPem,
    bootstrapKeyHash: hashSecret(operatorKey),
  });
  await api.start();
  teardown.add('stop the API services', () => api.stop());
  const app = createApp(api.deps);
  const drainWorker = await createWorker({
    connection: native,
    db: workerDb.db,
    namespace: 'default',
    taskQueue: drainQueue,
    workflowBundle: { code: drainBundle.code },
  });
  const baselineWorker = await Worker.create({
    connection: native,
    namespace: 'default',
    taskQueue: baselineQueue,
    workflowBundle: { code: baselineBundle.code },
    activities: { noop: async () => {} },
  });
  const workers = [drainWorker, baselineWorker];
  const runs = workers.map((w) => w.run());
  const dispatcher = await startDispatcher({
    db: workerDb.db,
    sql: workerDb.sql,
    temporal: client,
    taskQueue: drainQueue,
    log: silentLogger(),
  });
  teardown.add('shut the workers down', async () => {
    await dispatcher.stop();
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(runs);
  });

  const rounds: Round[] = [];
  for (let r = 0; r < options.rounds; r++) {
    // ── the pool: N nodes, nothing on them ─────────────────────────────────────────────────────
    const poolId = `bench-${r}-${randomBytes(3).toString('hex')}`;
    await apiDb.db
      .insert(pools)
      .values({ id: poolId, kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
    const nodeIds = Array.from({ length: n }, () => newId('node'));
    for (let i = 0; i < n; i += 500) {
      await apiDb.db.insert(nodes).values(
        nodeIds.slice(i, i + 500).map((id, j) => ({
          id,
          poolId,
          tenantId: 'bench',
          siteId: 'fra1',
          hostname: `bench-${r}-${String(i + j).padStart(5, '0')}`,
          provisionState: 'adopted' as const,
          connectivity: 'connected' as const,
        })),
      );
    }

    // ── the pool drain ─────────────────────────────────────────────────────────────────────────
    const requested = Date.now();
    const response = await app.request(`/v1/pools/${poolId}/drain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ maxConcurrent: Math.min(n, 1000), reason: 'bench' }),
    });
    if (response.status !== 202) throw new Error(`pool drain: ${response.status} ${await response.text()}`);
    const handle = client.workflow.getHandle(poolDrainWorkflowId(poolId));
    await waitForWorkflow(handle.describe.bind(handle));
    const outcome = await handle.result();
    const finished = Date.now();
    const childStarts: number[] = [];
    await paced(nodeIds, { concurrency: 16 }, async (nodeId) => {
      const described = await client.workflow.getHandle(drainWorkflowId(nodeId)).describe();
      childStarts.push(described.startTime.getTime());
    });

    // ── the baseline: N empty workflows, IN_FLIGHT started at once ─────────────────────────────
    const prefix = `bench-empty-${suffix}-${r}`;
    const ids = Array.from({ length: n }, (_, i) => `${prefix}/${i}`);
    await paced(ids, { concurrency: IN_FLIGHT }, async (workflowId) => {
      await client.workflow.start(empty, { taskQueue: baselineQueue, workflowId });
    });
    const emptyStarts: number[] = [];
    await paced(ids, { concurrency: 16 }, async (workflowId) => {
      const described = await client.workflow.getHandle(workflowId).describe();
      emptyStarts.push(described.startTime.getTime());
    });
    const children = rate(childStarts);
    const emptyRate = rate(emptyStarts);
    rounds.push({
      children,
      empty: emptyRate,
      ratio: round(children / emptyRate, 2),
      firstChildMs: Math.min(...childStarts) - requested,
      poolDrainMs: finished - requested,
      outcome,
    });
    log(`round ${r + 1}: pool drain ${outcome}; ${children} vs ${emptyRate} starts/s`);
  }

  const ratio = round(median(rounds.map((r) => r.ratio)), 2);
  const children = round(median(rounds.map((r) => r.children)), 1);
  const emptyRate = round(median(rounds.map((r) => r.empty)), 1);
  const succeeded = rounds.every((r) => r.outcome === 'succeeded');
  console.log(
    [
      '',
      `${NAME}: ${options.rounds} rounds of ${n} nodes, all at once; postgres ${services.postgres.source}, ` +
        `temporal ${services.temporal.source}; ${environment().cpus} CPUs`,
      '',
      formatTable(
        ['round', 'node drain starts/s', 'empty starts/s', 'ratio', 'first start ms', 'pool drain ms'],
        rounds.map((r, i) => [i + 1, r.children, r.empty, `${r.ratio}x`, r.firstChildMs, r.poolDrainMs]),
      ),
      '',
      `median ratio ${ratio}x (goal ≥ ${GOAL_RATIO}x)`,
    ].join('\n'),
  );
  const path = writeResult(NAME, {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    environment: environment(),
    services,
    rounds,
    ratio,
    figures: [
      {
        figure: `pool drain node drain starts (${n} nodes at once) vs empty workflow starts, median of ${options.rounds} rounds`,
        goal: `≥ ${GOAL_RATIO}×`,
        value: `${children} starts/s`,
        baseline: `${emptyRate} starts/s`,
        ratio,
        met: ratio >= GOAL_RATIO && succeeded,
      },
    ] satisfies Figure[],
  });
  console.log(`\nwrote ${path}`);
  return succeeded ? 0 : 1;
}

/** Waits until the dispatcher has started the workflow (the request answers before it exists). */
async function waitForWorkflow(describe: () => Promise<unknown>): Promise<void> {
  for (const started = Date.now(); ;) {
    if (
      await describe().then(
        () => true,
        () => false,
      )
    )
      return;
    if (Date.now() - started > 60_000) throw new Error('the pool drain workflow never started');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
