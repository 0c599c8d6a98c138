/**
 * pool-drain: how fast a pool drain starts its node drains, against the bare rate at which one
 * workflow starts empty children on the same Temporal server (goal: at least 0.7× of it).
 *
 * N nodes without allocations are drained by one `POST /v1/pools/{id}/drain` with maxConcurrent N,
 * so nothing but the pool drain itself paces the children: each wave is one activity of begins
 * (a transaction per node) and the wave's child starts side by side. Every child's start time is
 * read from Temporal (its workflow's start time); the rate is children per second from the first
 * start to the last. The baseline: one workflow starting N empty children in waves of the same
 * size, on a second worker of the same process and server, timed the same way.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { createApp } from '../api/app';
import { createAppDeps } from '../api/deps';
import { generateCa } from '../ca';
import { createDb } from '../db/client';
import { nodes, pools } from '../db/schema';
import { newId } from '../domain/ids';
import { hashSecret } from '../domain/secrets';
import { createWorker, workflowBundleSources } from '../worker';
import { drainWorkflowId, POOL_DRAIN_WAVE, poolDrainWorkflowId } from '../workflows/definitions';
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
import { round, summarize } from './support/stats';
import type { Teardown } from './support/teardown';
import { connectTemporal, eventMs, type HistoryEvent } from './support/temporal';
import { startEmptyChildren } from './workflows/baseline';

const NAME = 'pool-drain';
const baselinePath = fileURLToPath(new URL('./workflows/baseline.ts', import.meta.url));
/** The pool drain's wave: the baseline starts its children as many at a time. */
const WAVE = POOL_DRAIN_WAVE;
/** Child drain starts per second, at least this share of the bare empty-child rate. */
const GOAL_RATIO = 0.7;

const usage = [
  '  --nodes N   nodes of the pool, none holding an allocation, all drained at once (default 1000, max 5000)',
].join('\n');

interface Options {
  nodes: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, { nodes: { type: 'string' } });
  return { nodes: intOption('nodes', values.nodes, 1000, 2, 5000) };
}

export default defineBenchmark({
  summary: 'child drain start rate of a pool drain, against empty child workflow starts on the same server',
  usage,
  quick: ['--nodes', '500'],
  run: measured(parseOptions, measure),
});

/** Starts per second from the first start to the last. */
function rate(starts: number[]): number {
  const span = Math.max(...starts) - Math.min(...starts);
  return span > 0 ? round(((starts.length - 1) * 1000) / span, 1) : Infinity;
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const n = options.nodes;
  log(`${NAME}: ${n} nodes`);
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
  const api = createAppDeps({
    db: apiDb.db,
    sql: apiDb.sql,
    temporal: client,
    taskQueue: drainQueue,
    clusterId: 'bench',
    caPublicKeyPem: generateCa().publicKeyPem,
    bootstrapKeyHash: hashSecret(operatorKey),
    beginTimeoutMs: 30_000,
  });
  await api.start();
  teardown.add('stop the API services', () => api.stop());
  const app = createApp(api.deps);
  const drainWorker = await createWorker({
    connection: native,
    db: workerDb.db,
    ca: generateCa(),
    clusterId: 'bench',
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
  teardown.add('shut the workers down', async () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(runs);
  });

  // ── the pool: N nodes, nothing on them ───────────────────────────────────────────────────────
  const poolId = `bench-${randomBytes(3).toString('hex')}`;
  await apiDb.db.insert(pools).values({ id: poolId, kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
  const nodeIds = Array.from({ length: n }, () => newId('node'));
  for (let i = 0; i < n; i += 500) {
    await apiDb.db.insert(nodes).values(
      nodeIds.slice(i, i + 500).map((id, j) => ({
        id,
        poolId,
        tenantId: 'bench',
        siteId: 'fra1',
        hostname: `bench-${String(i + j).padStart(5, '0')}`,
        provisionState: 'adopted' as const,
        connectivity: 'connected' as const,
      })),
    );
  }
  log(`${n} nodes seeded`);

  // ── the pool drain ───────────────────────────────────────────────────────────────────────────
  const requested = Date.now();
  const response = await app.request(`/v1/pools/${poolId}/drain`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ maxConcurrent: Math.min(n, 1000), reason: 'bench' }),
  });
  if (response.status !== 202) throw new Error(`pool drain: ${response.status} ${await response.text()}`);
  const outcome = await client.workflow.getHandle(poolDrainWorkflowId(poolId)).result();
  const finished = Date.now();
  log(`pool drain ${outcome} in ${finished - requested} ms`);
  const childStarts: number[] = [];
  await paced(nodeIds, { concurrency: 16 }, async (nodeId) => {
    const described = await client.workflow.getHandle(drainWorkflowId(nodeId)).describe();
    childStarts.push(described.startTime.getTime());
  });

  const segments = await poolDrainSegments(client, poolDrainWorkflowId(poolId));

  // ── the baseline: one workflow starting N empty children, WAVE at a time ──────────────────────
  const prefix = `bench-empty-${suffix}`;
  await client.workflow.execute(startEmptyChildren, {
    taskQueue: baselineQueue,
    workflowId: `bench-start-children-${suffix}`,
    args: [{ prefix, n, wave: WAVE }],
  });
  const emptyStarts: number[] = [];
  await paced(
    Array.from({ length: n }, (_, i) => i),
    { concurrency: 16 },
    async (i) => {
      const described = await client.workflow.getHandle(`${prefix}/${i}`).describe();
      emptyStarts.push(described.startTime.getTime());
    },
  );
  log('baseline done');

  const children = rate(childStarts);
  const empty = rate(emptyStarts);
  const ratio = round(children / empty, 2);
  const firstChildMs = Math.min(...childStarts) - requested;
  console.log(
    [
      '',
      `${NAME}: ${n} nodes, all at once (waves of ${WAVE}); postgres ${services.postgres.source}, ` +
        `temporal ${services.temporal.source}; ${environment().cpus} CPUs`,
      '',
      formatTable(
        ['', 'n', 'starts/s', 'span ms'],
        [
          [
            'pool drain: child drain starts',
            n,
            children,
            Math.max(...childStarts) - Math.min(...childStarts),
          ],
          ['baseline: empty child starts', n, empty, Math.max(...emptyStarts) - Math.min(...emptyStarts)],
          ['ratio pool drain / baseline', '', `${ratio}x`, ''],
        ],
      ),
      '',
      `request → first child start ${firstChildMs} ms; request → pool drain ${outcome} ${finished - requested} ms`,
      '',
      formatTable(
        ['where the pool drain spends its time', 'n', 'p50 ms', 'p99 ms', 'sum ms'],
        Object.entries(segments).map(([label, samples]) => {
          const s = summarize(samples);
          return [label, s.count, s.p50, s.p99, Math.round(samples.reduce((a, b) => a + b, 0))];
        }),
      ),
    ].join('\n'),
  );
  const path = writeResult(NAME, {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    environment: environment(),
    services,
    rates: { childDrainStartsPerSecond: children, emptyChildStartsPerSecond: empty },
    ratio,
    figures: [
      {
        figure: `pool drain child starts (${n} nodes at once) vs empty child workflow starts`,
        goal: `≥ ${GOAL_RATIO}×`,
        value: `${children} starts/s`,
        baseline: `${empty} starts/s`,
        ratio,
        met: ratio >= GOAL_RATIO && outcome === 'succeeded',
      },
    ] satisfies Figure[],
    firstChildMs,
    poolDrainMs: finished - requested,
    segments: Object.fromEntries(
      Object.entries(segments).map(([label, samples]) => [label, summarize(samples)]),
    ),
    outcome,
  });
  console.log(`\nwrote ${path}`);
  return outcome === 'succeeded' ? 0 : 1;
}

/**
 * Where the pool drain's runs spent their time, from their histories: each wave's begins
 * (activity scheduled → completed), each child start (initiated → started), each workflow task
 * (started → completed).
 */
async function poolDrainSegments(client: Client, workflowId: string): Promise<Record<string, number[]>> {
  const segments: Record<string, number[]> = {
    'wave of begins (activity scheduled → completed)': [],
    'child start (initiated → started)': [],
    'workflow task (started → completed)': [],
  };
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const at = new Map<string, number>();
    for (const event of (history.events ?? []) as HistoryEvent[]) {
      const id = String(event.eventId);
      const time = eventMs(event.eventTime);
      at.set(id, time);
      const since = (scheduled: unknown) => time - (at.get(String(scheduled)) ?? NaN);
      if (event.activityTaskCompletedEventAttributes) {
        segments['wave of begins (activity scheduled → completed)']!.push(
          since(event.activityTaskCompletedEventAttributes.scheduledEventId),
        );
      }
      if (event.childWorkflowExecutionStartedEventAttributes) {
        segments['child start (initiated → started)']!.push(
          since(event.childWorkflowExecutionStartedEventAttributes.initiatedEventId),
        );
      }
      if (event.workflowTaskCompletedEventAttributes) {
        segments['workflow task (started → completed)']!.push(
          since(event.workflowTaskCompletedEventAttributes.startedEventId),
        );
      }
    }
  }
  return segments;
}
