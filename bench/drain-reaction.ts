/**
 * drain-reaction: how fast a drain notices that its node emptied, against the bare cost of a
 * Temporal signal waking a workflow on the same server (docs/lifecycle/drain.md: "a release must show up as
 * `node.drained` within a second").
 *
 * The API and the worker run as processes of their own, as in production (bench/support/
 * api-process.ts, worker-process.ts), each with its own pool. N nodes hold one allocation each and
 * are drained through the API's HTTP port; once every drain waits, the allocations are released
 * through it at a bounded concurrency, and each release is timed to its node's `node.drained`
 * event (the event's created_at, read from Postgres on this host's clock). The baseline: N
 * workflows that wait for a signal and complete, on a second worker of the worker process, on the
 * same server, signalled at the same concurrency and rate; each signal is timed to its workflow's
 * completion. Both sides are measured in rounds (`--rounds`), in turn, each round a share of the
 * releases and as many signals of each baseline, so the machine's load, which changes over a run
 * on a shared host, weighs on both alike. The figure is the ratio of the two. A second reference, N workflows that
 * run one empty activity after the signal, shows what Temporal's hops alone cost a drain; and every
 * workflow's history splits its latency into steps (API, workflow task, dispatch, activity).
 *
 * The releases are paced (20/s unless `--rate` says otherwise), below what the machine can absorb:
 * a reaction time is a latency only while nothing queues. Released faster than the API, worker,
 * Temporal server and Postgres together can finish them (`--rate max`: as fast as C in flight
 * allow), every release waits behind the ones before it, and the figure grows with N — it then
 * measures N divided by that capacity, whereas the baseline (a third of the CPU per signal) never
 * queues at the same rate. The CPU per release each process spent, printed, is what sets the capacity.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import postgres from 'postgres';
import { hashSecret } from '../domain/secrets';
import { createDb } from '../db/client';
import { drainProgressQuery, drainWorkflowId } from '../workflows/definitions';
import { startApiProcess } from './support/api-process';
import { apiCaller, drainAndWait, seedNodesWithAllocations, waitAll } from './support/drains';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Log,
  type Figure,
} from './support/benchmark';
import { createWallClock, postgresClockOffset } from './support/clock';
import { paced, sleep, until, type Pacing } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startServices } from './support/services';
import { round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';
import { connectTemporal, eventMs, type HistoryEvent } from './support/temporal';
import { devServerPid, processCpuMs, startWorkerProcess } from './support/worker-process';
import { goSignal, signalActivityRoundTrip, signalRoundTrip } from './workflows/baseline';

const NAME = 'drain-reaction';
/** The API's pool in production (db/client.ts). */
const API_CONNECTIONS = 10;
/** Releases per second unless told otherwise: below the machine's capacity (see above). */
const DEFAULT_RATE = 20;
/** Release → node.drained, at most this many times the bare signal round trip. */
const GOAL_RATIO = 2;

const usage = [
  '  --nodes N         nodes, each with one allocation, drained at once and released (default 1000,',
  '                    max 1000)',
  '  --concurrency C   releases (and baseline signals) in flight at once (default 8, max 64)',
  '  --rate R          releases per second (default 20); `max`: as fast as C in flight allow. The',
  '                    baseline signals go at the rate the releases reached, so both see the same load',
  '  --poll-ms P       how often the events table is read for node.drained (default 10); the',
  "                    latency uses the event's created_at, so this only moves the poller's row",
  '  --rounds K        the releases and both baselines are measured in K rounds of N/K each, in',
  '                    turn (default 5; 1: every release, then every signal), so a change in the',
  "                    machine's load over the run weighs on both sides alike",
  'env BENCH_WORKER_CPU_PROFILE=DIR: the worker process writes a V8 CPU profile of each of its',
  '                    threads to DIR when it stops (bench/support/cpu-profile.ts reads them)',
].join('\n');

interface Options {
  nodes: number;
  concurrency: number;
  rate: number | null;
  pollMs: number;
  rounds: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    nodes: { type: 'string' },
    concurrency: { type: 'string' },
    rate: { type: 'string' },
    'poll-ms': { type: 'string' },
    rounds: { type: 'string' },
  });
  const nodes = intOption('nodes', values.nodes, 1000, 1, 1000);
  return {
    nodes,
    concurrency: intOption('concurrency', values.concurrency, 8, 1, 64),
    rate: values.rate === 'max' ? null : intOption('rate', values.rate, DEFAULT_RATE, 1, 10_000),
    pollMs: intOption('poll-ms', values['poll-ms'], 10, 1, 100),
    rounds: intOption('rounds', values.rounds, Math.min(5, nodes), 1, nodes),
  };
}

/** One node's release, timed: client clock (sent, responded), Postgres (drained), Temporal (history). */
interface DrainSample {
  nodeId: string;
  allocationId: string;
  sent: number;
  responded: number;
  /** node.drained created_at: the start of the lookAtDrain transaction that wrote it. */
  drained: number | null;
  /** When the poller saw the event. */
  observed: number | null;
  /** The round (of `--rounds`) it was released in. */
  round: number;
  signalled?: number;
  /** The workflow task that handles the signal, started on the worker. */
  taskStarted?: number;
  /** lookAtDrain is a local activity: its result is recorded as a marker when that task completes. */
  checkRecorded?: number;
  closed?: number;
}

interface PhaseStats {
  ms: number;
  /** Share of the phase this process' event loop (the load generator and client) was busy. */
  eventLoopBusy: number;
  /** CPU time over wall time: this process, the API process, the worker process. */
  cores: number;
  apiCores: number;
  workerCores: number;
  /** The Temporal dev server's cores, when this benchmark started it (null: a server of TEMPORAL_ADDRESS). */
  temporalCores: number | null;
  /** CPU milliseconds each process spent over the phase. */
  cpuMs: { self: number; api: number; worker: number; temporal: number | null };
}

interface BaselineSample {
  kind: 'signal' | 'activity';
  workflowId: string;
  round?: number;
  sent: number;
  acknowledged: number;
  signalled?: number;
  /** The workflow task that handles the signal, started on the worker. */
  taskStarted?: number;
  activityScheduled?: number;
  activityStarted?: number;
  activityCompleted?: number;
  closed?: number;
}

function baselineSamples(kind: BaselineSample['kind'], n: number, suffix: string): BaselineSample[] {
  return Array.from({ length: n }, (_, i) => ({
    kind,
    workflowId: `bench-baseline-${kind}/${suffix}/${i}`,
    sent: NaN,
    acknowledged: NaN,
  }));
}

export default defineBenchmark({
  summary: 'release → node.drained latency, against a bare signal → workflow completion on the same server',
  usage,
  // The goal is set at 1,000 drains: the quick run measures it there too.
  quick: ['--nodes', '1000'],
  run: measured(parseOptions, measure),
});

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const n = options.nodes;
  const phaseTimeoutMs = 60_000 + n * 300;
  const now = createWallClock();
  const loadBefore = loadavg().map((x) => round(x));
  // Per phase: wall time, how busy this process' main thread was, and how many cores it used.
  const phases: Record<string, PhaseStats> = {};
  log(`${NAME}: ${n} nodes, concurrency ${options.concurrency}${options.rate ? `, ${options.rate}/s` : ''}`);

  // ── services, the API process, the worker process ───────────────────────────────────────────
  const services = await startServices(teardown, log);
  log(
    `postgres: ${services.postgres.source} (${services.postgres.database}); ` +
      `temporal: ${services.temporal.source} at ${services.temporal.address}`,
  );
  const { client } = await connectTemporal(services.temporal.address, teardown);
  // The seeding pool, and one connection for the watcher; the API and the worker have their own.
  const seedDb = createDb(services.databaseUrl, { max: 2 });
  const watch = postgres(services.databaseUrl, { max: 1, onnotice: () => {} });
  teardown.add('close the database pools', () => Promise.all([seedDb.close(), watch.end({ timeout: 5 })]));
  const clockOffsetMs = await postgresClockOffset(watch, now);
  if (Math.abs(clockOffsetMs) > 5) {
    log(`warning: Postgres' clock is ${round(clockOffsetMs)} ms off ours; drained times are skewed by that`);
  }

  const suffix = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const drainQueue = `bench-drain-${suffix}`;
  const baselineQueue = `bench-baseline-${suffix}`;
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const [api, worker] = await Promise.all([
    startApiProcess(
      {
        databaseUrl: services.databaseUrl,
        temporalAddress: services.temporal.address,
        taskQueue: drainQueue,
        bootstrapKeyHash: hashSecret(operatorKey),
        connections: API_CONNECTIONS,
      },
      teardown,
    ),
    startWorkerProcess(
      {
        databaseUrl: services.databaseUrl,
        temporalAddress: services.temporal.address,
        taskQueue: drainQueue,
        baselineTaskQueue: baselineQueue,
      },
      teardown,
    ),
  ]);
  log(`API process ${api.pid} on port ${api.port}; worker process ${worker.pid}`);

  // Per phase: wall time, how busy this process' main thread was, and the cores each process used.
  const temporalPid = devServerPid(Number(new URL(`http://${services.temporal.address}`).port));
  const cpuNow = async () => ({
    self: process.cpuUsage(),
    api: await api.cpu(),
    worker: (await worker.stats()).cpu,
    temporalMs: temporalPid === null ? null : processCpuMs(temporalPid),
  });
  const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1000;
  // Summed over every stretch of a phase (the rounds below each add one per side).
  const spent: Record<
    string,
    Omit<PhaseStats, 'eventLoopBusy' | 'cores' | 'apiCores' | 'workerCores' | 'temporalCores'> & {
      busyMs: number;
    }
  > = {};
  let mark = { at: Date.now(), elu: performance.eventLoopUtilization(), cpu: await cpuNow() };
  const phase = async (name: string) => {
    const cpu = await cpuNow();
    const ms = Date.now() - mark.at;
    const total = (spent[name] ??= { ms: 0, busyMs: 0, cpuMs: { self: 0, api: 0, worker: 0, temporal: 0 } });
    total.ms += ms;
    total.busyMs += performance.eventLoopUtilization(mark.elu).utilization * ms;
    total.cpuMs.self += cpuMs(mark.cpu.self, cpu.self);
    total.cpuMs.api += cpuMs(mark.cpu.api, cpu.api);
    total.cpuMs.worker += cpuMs(mark.cpu.worker, cpu.worker);
    total.cpuMs.temporal =
      cpu.temporalMs === null || mark.cpu.temporalMs === null || total.cpuMs.temporal === null
        ? null
        : total.cpuMs.temporal + cpu.temporalMs - mark.cpu.temporalMs;
    const cores = (cpu: number) => round(cpu / Math.max(total.ms, 1), 2);
    phases[name] = {
      ms: total.ms,
      eventLoopBusy: round(total.busyMs / Math.max(total.ms, 1), 3),
      cores: cores(total.cpuMs.self),
      apiCores: cores(total.cpuMs.api),
      workerCores: cores(total.cpuMs.worker),
      temporalCores: total.cpuMs.temporal === null ? null : cores(total.cpuMs.temporal),
      cpuMs: {
        self: round(total.cpuMs.self, 1),
        api: round(total.cpuMs.api, 1),
        worker: round(total.cpuMs.worker, 1),
        temporal: total.cpuMs.temporal === null ? null : round(total.cpuMs.temporal, 1),
      },
    };
    mark = { at: Date.now(), elu: performance.eventLoopUtilization(), cpu };
  };
  await phase('setup');

  const call = apiCaller(api.port, operatorKey);
  const setupPacing: Pacing = { concurrency: Math.max(options.concurrency, 8) };

  // ── drains: N nodes, one allocation each, drained and waiting ───────────────────────────
  const { nodeIds, allocationOf } = await seedNodesWithAllocations(seedDb.db, call, n, setupPacing);
  log(`${n} nodes seeded with an allocation each`);
  // ── drains, and the baselines: N workflows waiting on a signal, N with an empty activity
  // after it; set up side by side (nothing is measured yet), each ending with every workflow
  // waiting on its signal.
  const baselines = {
    signal: baselineSamples('signal', n, suffix),
    activity: baselineSamples('activity', n, suffix),
  };
  const allBaselines = [...baselines.signal, ...baselines.activity];
  await Promise.all([
    (async () => {
      await drainAndWait(client, call, nodeIds, setupPacing, phaseTimeoutMs);
      log(`${n} drains started and waiting`);
    })(),
    (async () => {
      await paced(allBaselines, setupPacing, async (sample) => {
        const workflow = sample.kind === 'signal' ? signalRoundTrip : signalActivityRoundTrip;
        await client.workflow.start(workflow, {
          workflowId: sample.workflowId,
          taskQueue: baselineQueue,
        });
      });
      // Started and its first workflow task completed: it waits on the signal, as a drain does.
      await waitAll(
        'baseline workflows waiting',
        allBaselines.map((s) => s.workflowId),
        phaseTimeoutMs,
        async (id) => (await client.workflow.getHandle(id).describe()).historyLength >= 4,
      );
      log(`${2 * n} baseline workflows started and waiting`);
    })(),
  ]);
  await phase('drains and baselines started');

  // ── measure, in rounds: releases → node.drained, signals → baseline completion ──────────
  // Each round releases its share of the nodes, then signals as many of each baseline's
  // workflows, at the same concurrency and rate, one side at a time (nothing of one overlaps the
  // other), in an order that turns each round, so no side always follows the same one. A load
  // that changes over the run (another process on the machine) then falls on both sides alike.
  const samples = new Map<string, DrainSample>();
  const watcher = watchDrained(watch, now, options.pollMs, samples, await lastEventId(watch));
  const releasePacing: Pacing = {
    concurrency: options.concurrency,
    ...(options.rate ? { ratePerSecond: options.rate } : {}),
  };
  const share = <T>(items: T[], nth: number) =>
    items.slice(Math.floor((nth * n) / options.rounds), Math.floor(((nth + 1) * n) / options.rounds));
  /** Per round of releases: the releases per second it reached (the baselines' rate under `--rate max`). */
  const releaseRates: number[] = [];
  const sides = ['releases', 'signal baseline', 'activity baseline'] as const;
  const release = async (nodes: string[], nth: number) => {
    watcher.resume();
    await paced(nodes, releasePacing, async (nodeId) => {
      const allocationId = allocationOf.get(nodeId)!;
      const sample: DrainSample = {
        nodeId,
        allocationId,
        sent: now(),
        responded: NaN,
        drained: null,
        observed: null,
        round: nth,
      };
      samples.set(nodeId, sample);
      const reply = await call('POST', `/v1/allocations/${allocationId}/release`);
      sample.responded = now();
      if (reply.status !== 200) throw new Error(`release: ${reply.status} ${JSON.stringify(reply.body)}`);
    });
    releaseRates.push(ratePerSecond(nodes.map((id) => samples.get(id)!.sent)));
    await watcher.seen(samples.size, Math.max(10_000, nodes.length * 20));
    watcher.pause();
    // As the baselines do: the round's drain workflows closed before the next side starts (those
    // that drained: one that never did is reported below).
    const drained = nodes.filter((id) => samples.get(id)!.drained !== null);
    await paced(drained, { concurrency: 16 }, async (nodeId) => {
      await client.workflow.getHandle(drainWorkflowId(nodeId)).result();
    });
  };
  const signalRates: number[] = [];
  const signal = async (batch: BaselineSample[], nth: number) => {
    const signalPacing: Pacing = {
      concurrency: options.concurrency,
      ratePerSecond: options.rate ?? Math.round(releaseRates.reduce((a, b) => a + b) / releaseRates.length),
    };
    await paced(batch, signalPacing, async (sample) => {
      sample.round = nth;
      sample.sent = now();
      await client.workflow.getHandle(sample.workflowId).signal(goSignal);
      sample.acknowledged = now();
    });
    if (batch[0]?.kind === 'signal') signalRates.push(ratePerSecond(batch.map((s) => s.sent)));
    await paced(batch, { concurrency: 16 }, async (sample) => {
      await client.workflow.getHandle(sample.workflowId).result();
    });
  };
  try {
    await phase('before the rounds');
    for (let nth = 0; nth < options.rounds; nth++) {
      for (let turn = 0; turn < sides.length; turn++) {
        const side = sides[(nth + turn) % sides.length]!;
        if (side === 'releases') await release(share(nodeIds, nth), nth);
        else await signal(share(baselines[side === 'signal baseline' ? 'signal' : 'activity'], nth), nth);
        await phase(side);
      }
    }
  } finally {
    await watcher.stop();
  }
  const samplesByNode = nodeIds.map((id) => samples.get(id)!);
  log(`${n} allocations released, ${n} of each baseline signalled, in ${options.rounds} rounds`);
  const missing = samplesByNode.filter((s) => s.drained === null).length;
  if (missing > 0) {
    const first = samplesByNode.find((s) => s.drained === null)!;
    const handle = client.workflow.getHandle(drainWorkflowId(first.nodeId));
    const described = await handle.describe();
    const progress = await handle.query(drainProgressQuery).catch((e: Error) => e.message);
    log(
      `${missing} of ${n} nodes never showed node.drained; the first, ${first.nodeId}: ` +
        `workflow ${described.status.name}, progress ${JSON.stringify(progress)}`,
    );
  } else log(`${n} node.drained events seen`);
  const releaseRate = Math.round(releaseRates.reduce((a, b) => a + b) / releaseRates.length);

  // ── where the time went: the histories of every workflow ────────────────────────────────
  await paced(samplesByNode, { concurrency: 16 }, async (sample) => {
    const history = await client.workflow.getHandle(drainWorkflowId(sample.nodeId)).fetchHistory();
    Object.assign(sample, drainTimeline(history.events ?? []));
  });
  await paced(allBaselines, { concurrency: 16 }, async (sample) => {
    const history = await client.workflow.getHandle(sample.workflowId).fetchHistory();
    Object.assign(sample, baselineTimeline(history.events ?? []));
  });
  await phase('histories');

  const result = report({
    options,
    services,
    clockOffsetMs,
    clockDriftMs: now.drift(),
    phases,
    drains: samplesByNode,
    baselines,
    releaseRate,
    signalRate: Math.round(signalRates.reduce((a, b) => a + b) / signalRates.length),
    drainWorkerCache: (await worker.stats()).maxCachedWorkflows,
    loadBefore,
  });
  const path = writeResult(NAME, result);
  console.log(`\nwrote ${path}`);
  return missing === 0 ? 0 : 1;
}

async function lastEventId(sql: postgres.Sql): Promise<bigint> {
  const [row] = await sql<{ id: string }[]>`select coalesce(max(id), 0)::text as id from events`;
  return BigInt(row!.id);
}

/** How long an id missing below newer events may still appear (a transaction yet to commit). */
const GAP_GRACE_MS = 2_000;

/**
 * Reads new events in one query every `pollMs` and stamps each `node.drained` on its sample. The
 * latency uses the event's created_at, so how often this polls adds nothing to it.
 *
 * Event ids are taken at insert but become visible at commit, so a smaller id can appear after a
 * larger one: the watermark moves only over ids seen without a hole below them, and a hole is
 * given up (a rolled-back insert) after GAP_GRACE_MS.
 */
function watchDrained(
  sql: postgres.Sql,
  now: () => number,
  pollMs: number,
  samples: Map<string, DrainSample>,
  after: bigint,
) {
  let low = after; // every id <= low is accounted for
  const above = new Set<bigint>(); // ids seen above `low`
  let hole: { id: bigint; since: number } | null = null; // the lowest id not seen yet
  let count = 0;
  let stopped = false;
  // Polls only while releases are measured, so the baselines run without its queries.
  let paused = true;
  const early: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      if (paused) {
        await sleep(pollMs);
        continue;
      }
      const rows = await sql<{ id: string; node_id: string | null; type: string; at: string }[]>`
        select id::text, node_id, type, extract(epoch from created_at) * 1000 as at
        from events where id > ${low.toString()} order by id`;
      const observed = now();
      for (const row of rows) {
        const id = BigInt(row.id);
        if (above.has(id)) continue;
        above.add(id);
        if (row.type !== 'node.drained' || !row.node_id) continue;
        const sample = samples.get(row.node_id);
        if (!sample) early.push(row.node_id);
        else if (sample.drained === null) {
          sample.drained = Number(row.at);
          sample.observed = observed;
          count++;
        }
      }
      while (above.has(low + 1n)) above.delete(++low);
      if (above.size === 0) hole = null;
      else if (hole?.id !== low + 1n) hole = { id: low + 1n, since: observed };
      else if (observed - hole.since > GAP_GRACE_MS) {
        low = hole.id;
        hole = null;
        while (above.has(low + 1n)) above.delete(++low);
      }
      await sleep(pollMs);
    }
  })();
  return {
    /** Waits until `expected` nodes drained; resolves to how many did within `timeoutMs`. */
    async seen(expected: number, timeoutMs: number): Promise<number> {
      await until(
        'node.drained for every release',
        async () => count >= expected || early.length > 0,
        timeoutMs,
        20,
      ).catch(() => {});
      if (early.length > 0) throw new Error(`node ${early[0]} drained before its release was sent`);
      return count;
    },
    resume() {
      paused = false;
    },
    pause() {
      paused = true;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Releases per second over the span between the first and last send. */
function ratePerSecond(sent: number[]): number {
  const span = Math.max(...sent) - Math.min(...sent);
  return span > 0 ? Math.round(((sent.length - 1) * 1000) / span) : sent.length * 1000;
}

function drainTimeline(events: HistoryEvent[]): Partial<DrainSample> {
  const signalIndex = events.findLastIndex(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'wake',
  );
  if (signalIndex < 0) return {};
  const after = (found: (e: HistoryEvent) => unknown) => events.find((e, i) => i > signalIndex && found(e));
  const taskStarted = after((e) => e.workflowTaskStartedEventAttributes);
  const recorded = after((e) => e.markerRecordedEventAttributes);
  const closed = events.find((e) => e.workflowExecutionCompletedEventAttributes);
  return {
    signalled: eventMs(events[signalIndex]!.eventTime),
    taskStarted: taskStarted ? eventMs(taskStarted.eventTime) : undefined,
    checkRecorded: recorded ? eventMs(recorded.eventTime) : undefined,
    closed: closed ? eventMs(closed.eventTime) : undefined,
  };
}

function baselineTimeline(events: HistoryEvent[]): Partial<BaselineSample> {
  const at = (e: HistoryEvent | undefined) => (e ? eventMs(e.eventTime) : undefined);
  const signalIndex = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
  return {
    signalled: at(events[signalIndex]),
    taskStarted:
      signalIndex < 0
        ? undefined
        : at(events.find((e, i) => i > signalIndex && e.workflowTaskStartedEventAttributes)),
    activityScheduled: at(events.find((e) => e.activityTaskScheduledEventAttributes)),
    activityStarted: at(events.find((e) => e.activityTaskStartedEventAttributes)),
    activityCompleted: at(events.find((e) => e.activityTaskCompletedEventAttributes)),
    closed: at(events.find((e) => e.workflowExecutionCompletedEventAttributes)),
  };
}

type Times<T> = { [K in keyof T]: T[K] extends number | null | undefined ? K : never }[keyof T];

/** Summary of `to - from` over the samples where both times are known. */
function span<T>(samples: T[], from: Times<T>, to: Times<T>): Summary {
  const out: number[] = [];
  for (const s of samples) {
    const a = s[from] as number | null | undefined;
    const b = s[to] as number | null | undefined;
    if (a != null && b != null && Number.isFinite(a) && Number.isFinite(b)) out.push(b - a);
  }
  return summarize(out);
}

function report(input: {
  options: Options;
  services: Awaited<ReturnType<typeof startServices>>;
  clockOffsetMs: number;
  clockDriftMs: number;
  loadBefore: number[];
  phases: Record<string, PhaseStats>;
  drains: DrainSample[];
  baselines: Record<BaselineSample['kind'], BaselineSample[]>;
  releaseRate: number;
  signalRate: number;
  drainWorkerCache: number;
}) {
  const { drains, baselines, options, phases } = input;
  const baseline = baselines.signal;
  const drain = span(drains, 'sent', 'drained');
  const bare = span(baseline, 'sent', 'closed');
  const ratio = { p50: round(drain.p50 / bare.p50), p99: round(drain.p99 / bare.p99) };
  // How steady the figure is over the run: each round's p50 ratio.
  const roundRatios = Array.from({ length: options.rounds }, (_, r) => {
    const inRound = <T extends { round?: number }>(xs: T[]) => xs.filter((x) => x.round === r);
    return round(
      span(inRound(drains), 'sent', 'drained').p50 / span(inRound(baseline), 'sent', 'closed').p50,
    );
  });
  const figures: Figure[] = (['p50', 'p99'] as const).map((q) => ({
    figure:
      `drain reaction ${q}, release → node.drained (${options.nodes.toLocaleString('en')} drains, ` +
      `${options.rate ? `${options.rate} releases/s` : `releases as fast as ${options.concurrency} in flight allow`}) vs bare signal`,
    goal: `≤ ${GOAL_RATIO}×`,
    value: `${drain[q]} ms`,
    baseline: `${bare[q]} ms`,
    ratio: ratio[q],
    met: drain.count === options.nodes && ratio[q] <= GOAL_RATIO,
  }));

  const also: [string, Summary][] = [
    ['release → node.drained seen by the poller', span(drains, 'sent', 'observed')],
    ['release → drain workflow closed', span(drains, 'sent', 'closed')],
    ['release request (API reply)', span(drains, 'sent', 'responded')],
    ['signal request (client ack)', span(baseline, 'sent', 'acknowledged')],
    ['signal → empty activity → workflow completed', span(baselines.activity, 'sent', 'closed')],
  ];
  const drainSegments: [string, Summary][] = [
    ['API + outbox: release sent → wake signal in history', span(drains, 'sent', 'signalled')],
    ['dispatch: signal → workflow task started', span(drains, 'signalled', 'taskStarted')],
    ['task: started → local lookAtDrain tx began', span(drains, 'taskStarted', 'drained')],
    ['(after) tx began → task completed (marker)', span(drains, 'drained', 'checkRecorded')],
    ['(after) task completed → workflow closed', span(drains, 'checkRecorded', 'closed')],
  ];
  const baselineSegments: [string, Summary][] = [
    ['client: signal sent → signal in history', span(baseline, 'sent', 'signalled')],
    ['dispatch: signal → workflow task started', span(baseline, 'signalled', 'taskStarted')],
    ['workflow task: started → workflow closed', span(baseline, 'taskStarted', 'closed')],
  ];
  const activity = baselines.activity;
  const activitySegments: [string, Summary][] = [
    ['client: signal sent → signal in history', span(activity, 'sent', 'signalled')],
    ['workflow task: signal → activity scheduled', span(activity, 'signalled', 'activityScheduled')],
    ['dispatch: activity scheduled → started', span(activity, 'activityScheduled', 'activityStarted')],
    ['activity: started → completed', span(activity, 'activityStarted', 'activityCompleted')],
    ['workflow task: activity completed → closed', span(activity, 'activityCompleted', 'closed')],
  ];

  const row = (label: string, s: Summary) => [label, s.count, s.p50, s.p99, s.max];
  const table = (title: string, rows: [string, Summary][]) =>
    formatTable(
      [title, 'n', 'p50 ms', 'p99 ms', 'max ms'],
      rows.map(([l, s]) => row(l, s)),
    );
  const busy = (p: PhaseStats | undefined) =>
    p
      ? `cores: this process ${p.cores}, API ${p.apiCores}, worker ${p.workerCores}, ` +
        `Temporal ${p.temporalCores ?? '?'}`
      : '?';
  // CPU milliseconds per release (or signal) in each process over its phase: steadier than latency
  // on a shared machine. The phase runs until the last workflow closed, so idle polling counts too.
  const perOperation = (p: PhaseStats | undefined) =>
    p && {
      apiMs: round(p.cpuMs.api / options.nodes, 2),
      workerMs: round(p.cpuMs.worker / options.nodes, 2),
      temporalMs: p.cpuMs.temporal === null ? null : round(p.cpuMs.temporal / options.nodes, 2),
    };
  const cpuPerOperation = {
    release: perOperation(phases.releases),
    signal: perOperation(phases['signal baseline']),
    signalAndActivity: perOperation(phases['activity baseline']),
  };
  const cpu = (c: ReturnType<typeof perOperation>) =>
    c ? `API ${c.apiMs} ms, worker ${c.workerMs} ms, Temporal ${c.temporalMs ?? '?'} ms` : '?';
  const pacing = options.rate ? `${options.rate}/s` : `as fast as ${options.concurrency} in flight allow`;
  const environ = environment();
  console.log(
    [
      '',
      `${NAME}: ${options.nodes} nodes, concurrency ${options.concurrency} (${pacing}); ` +
        `releases at ${input.releaseRate}/s, baseline signals at ${input.signalRate}/s`,
      `postgres ${input.services.postgres.source}, temporal ${input.services.temporal.source}; ` +
        `clocks: Postgres ${round(input.clockOffsetMs, 3)} ms off ours, drift ${round(input.clockDriftMs, 3)} ms; ` +
        `${environ.cpus} CPUs, ` +
        `load ${input.loadBefore.join(' ')} before, ${environ.loadavg.join(' ')} after`,
      `while releasing: ${busy(phases.releases)}; while signalling: ${busy(phases['signal baseline'])}`,
      `${options.rounds} rounds; p50 ratio per round: ${roundRatios.map((r) => `${r}x`).join(' ')}`,
      `CPU per release: ${cpu(cpuPerOperation.release)}; per baseline signal: ${cpu(cpuPerOperation.signal)}; ` +
        `per signal + empty activity: ${cpu(cpuPerOperation.signalAndActivity)}`,
      '',
      formatTable(
        ['', 'n', 'p50 ms', 'p99 ms', 'max ms'],
        [
          row('release → node.drained', drain),
          row('signal → workflow completed (baseline)', bare),
          ['ratio drain / baseline', '', `${ratio.p50}x`, `${ratio.p99}x`, ''],
        ],
      ),
      '',
      table('also', also),
      '',
      table('where a release goes', drainSegments),
      '',
      table('where a baseline signal goes', baselineSegments),
      '',
      table('where a signal + empty activity goes', activitySegments),
    ].join('\n'),
  );

  return {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    environment: { ...environ, loadavgBefore: input.loadBefore },
    services: input.services,
    clockOffsetMs: round(input.clockOffsetMs, 3),
    clockDriftMs: round(input.clockDriftMs, 3),
    workerMaxCachedWorkflows: input.drainWorkerCache,
    phases,
    cpuPerOperation,
    rates: { releasesPerSecond: input.releaseRate, signalsPerSecond: input.signalRate },
    drain: { releaseToDrained: drain, ...Object.fromEntries(also) },
    baseline: { signalToCompleted: bare },
    ratio,
    roundRatios,
    figures,
    segments: {
      drain: Object.fromEntries(drainSegments),
      baseline: Object.fromEntries(baselineSegments),
      activityBaseline: Object.fromEntries(activitySegments),
    },
    // Epoch ms on this host's clock; null where a time is unknown.
    samples: { drain: drains, baseline, activityBaseline: activity },
  };
}
