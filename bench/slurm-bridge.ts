/**
 * slurm-bridge: the Slurm bridge (docs/bridges/slurm.md, issue 31) against a real Slurm — how long
 * after a job ends its allocation is released, and how long a restarted bridge takes to catch up —
 * each against what Slurm itself takes to say as much, measured in the same run.
 *
 * A real cluster (scripts/services/slurm.ts): 4 nodes of 128 CPUs, matched by hostname to 4 Drydock
 * nodes, and a fifth Slurm node Drydock does not know. A bridge logs such a node once, at the end of
 * its first pass, whatever the pass did: that line is how a first pass that writes nothing is timed.
 * The API runs as a process of its own (bench/support/api-process.ts), the bridge too, as an
 * operator runs it (`node bin/drydock-bridge.mjs --json slurm …`), and slurmctld's
 * Prolog/EpilogSlurmctld run bin/drydock-slurm-hook through a wrapper that names the spool.
 *
 * 1. Job end → allocation released. Jobs of 1 CPU (`sbatch -w NODE --wrap 'sleep …'`) are
 *    submitted and recorded by the bridge; then, one at a time, each is cancelled and timed from
 *    just before its `scancel` to the end of the first poll that shows it ended, the jobs taking
 *    turns between the two sides: the bridge's (GET /v1/allocations?source=…&externalId=ID&live=true
 *    answers none) and the baseline, Slurm's own (the job's entry in `squeue --json` no longer
 *    RUNNING, SUSPENDED or CONFIGURING, the states the bridge counts as holding a node). Both are
 *    polled back to back, at most every --poll-ms; a poll's round trip is the resolution (printed).
 *    Where a release's time goes is printed too: when the epilog hook's file landed in the spool
 *    (watched here as well) and when the bridge logged the pass that released the job. Measured on
 *    an idle cluster; again while the resync's jobs run (every pass reads them all); and with the
 *    hook off: a bridge whose spool no hook writes, sweeping every 5 s, its jobs cancelled one
 *    after another across one sweep period, polled through the live list.
 * 2. Resync after a restart. R jobs running and no bridge; a bridge started and timed to the end of
 *    its first pass, which records all R (cold: Drydock holds none); stopped and started again with
 *    all of them recorded (warm: nothing to write). The baseline: one `squeue --json` listing them
 *    (the median of 5). API calls are counted server-side, from the API's /metrics
 *    (drydock_http_request_duration_seconds_count per method and route), from the bridge's start
 *    until it is quiet (no request for 2 s, its event-feed long-poll waiting).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config';
import { createDb } from '../db/client';
import { nodes, pools } from '../db/schema';
import { newId } from '../domain/ids';
import { hashSecret } from '../domain/secrets';
import { startSlurm, type SlurmCluster } from '../scripts/services/slurm';
import { startApiProcess } from './support/api-process';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { apiCaller, type ApiCall } from './support/drains';
import { paced, sleep, until } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startBenchDatabase } from './support/services';
import { round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';
import { processCpuMs, residentBytes } from './support/worker-process';

const NAME = 'slurm-bridge';
const CLUSTER = 'benchslurm';
const SOURCE = `slurm:${CLUSTER}`;
const NODE_NAMES = ['sb-node-1', 'sb-node-2', 'sb-node-3', 'sb-node-4'];
/** A Slurm node with no Drydock node: the bridge names it at the end of each start's first pass. */
const UNMATCHED = 'sb-login';
const CPUS_PER_NODE = 128;
/** Far longer than any run: a job ends only when the benchmark cancels it. */
const JOB = 'sleep 7200';
/** The states in which the bridge counts a job as holding its node (bridges/slurm/json.ts). */
const RUNNING_STATES = new Set(['RUNNING', 'SUSPENDED', 'CONFIGURING']);
/** docs/bridges/slurm.md: "When the job ends, the allocation is released — within a second". */
const GOAL_MS = 1000;
/** The production default: with the hook on, the sweep is only the safety net. */
const HOOK_SWEEP = '30s';
const NO_HOOK_SWEEP_MS = 5000;
const RESYNC_DEFAULT = 500;
/** No request for this long, the event long-poll waiting: a started bridge is done with its passes. */
const QUIET_MS = 2000;
const BRIDGE = fileURLToPath(new URL('../bin/drydock-bridge.mjs', import.meta.url));
const HOOK = fileURLToPath(new URL('../bin/drydock-slurm-hook', import.meta.url));

const usage = [
  '  --jobs N      jobs cancelled and timed on each side (bridge, squeue) per latency measurement',
  '                (default 100, max 200)',
  `  --running R   jobs running across the 4 nodes (512 CPUs) for the resync and the busy latency`,
  `                (default and max ${RESYNC_DEFAULT})`,
  '  --poll-ms P   how often each side is polled at most, back to back (default 20)',
].join('\n');

interface Options {
  jobs: number;
  running: number;
  pollMs: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    jobs: { type: 'string' },
    running: { type: 'string' },
    'poll-ms': { type: 'string' },
  });
  return {
    jobs: intOption('jobs', values.jobs, 100, 2, 200),
    running: intOption('running', values.running, RESYNC_DEFAULT, 2, RESYNC_DEFAULT),
    pollMs: intOption('poll-ms', values['poll-ms'], 20, 1, 1000),
  };
}

export default defineBenchmark({
  summary: 'Slurm job end → allocation released, and a bridge restart’s resync, against squeue itself',
  usage,
  quick: ['--jobs', '20', '--running', '100'],
  run: measured(parseOptions, measure),
});

/** One cancelled job, timed from just before its scancel. */
interface EndSample {
  job: string;
  side: 'bridge' | 'squeue';
  ms: number;
  scancelMs: number;
  polls: number;
  /** The mean round trip of one poll: the resolution of `ms`. */
  pollRoundTripMs: number;
  /** When the EpilogSlurmctld hook's file appeared in the spool (hook on only). */
  hookMs?: number;
  /** When the bridge logged the pass that released it (bridge side only). */
  passMs?: number;
}

/** What a bridge's start did until it was quiet. */
interface Resync {
  /** Spawn → the end of the first pass (its unmatched-node line). */
  ms: number;
  /** Spawn → the bridge's first line (Node, tsx and the program loaded). */
  startupMs: number;
  recorded: number;
  passes: number;
  /** API requests by `METHOD route`, spawn → quiet. */
  calls: Record<string, number>;
  callsTotal: number;
  writes: number;
  failedCalls: number;
  bridgeCpuMs: number;
  apiCpuMs: number;
  bridgeRssMb: number;
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const n = options.jobs;
  const r = options.running;
  const busyPairs = Math.min(n, Math.floor(r / 2));
  log(`${NAME}: ${n} jobs a side, ${r} running for the resync; polls every ${options.pollMs} ms at most`);

  // ── Drydock: a database, the API process, 4 nodes, the bridge's key ─────────────────────────
  const services = await startBenchDatabase(teardown, log);
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const api = await startApiProcess(
    {
      databaseUrl: services.databaseUrl,
      taskQueue: `bench-${NAME}-${process.pid}`,
      bootstrapKeyHash: hashSecret(operatorKey),
      connections: 10,
    },
    teardown,
  );
  const call = apiCaller(api.port, operatorKey);
  const seed = createDb(services.databaseUrl, { max: 1 });
  teardown.add('close the seeding pool', () => seed.close());
  await seed.db.insert(pools).values({ id: 'slurm', kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
  await seed.db.insert(nodes).values(
    NODE_NAMES.map((hostname) => ({
      id: newId('node'),
      poolId: 'slurm',
      tenantId: 'bench',
      siteId: 'fra1',
      hostname,
      provisionState: 'adopted' as const,
      connectivity: 'connected' as const,
    })),
  );
  const key = await call('POST', '/v1/keys', { name: `slurm-bridge-${CLUSTER}` });
  if (key.status !== 201) throw new Error(`POST /v1/keys: ${key.status} ${JSON.stringify(key.body)}`);
  const token = key.body.secret as string;

  // ── Slurm: the hook's wrapper, the cluster ─────────────────────────────────────────────────────
  const dir = mkdtempSync(join(tmpdir(), 'drydock-bench-slurm-'));
  teardown.add('remove the bridge spools', () => rmSync(dir, { recursive: true, force: true }));
  const spool = join(dir, 'spool');
  // What no hook writes: the hook-off bridge's spool.
  const silentSpool = join(dir, 'no-hook');
  for (const d of [spool, silentSpool]) mkdirSync(d, { recursive: true, mode: 0o1777 });
  // slurmctld runs its hooks with no PATH and no arguments: the wrapper sets the spool.
  const hook = join(dir, 'drydock-slurm-hook');
  writeFileSync(hook, `#!/bin/sh\nDRYDOCK_BRIDGE_SPOOL='${spool}' exec '${HOOK}'\n`);
  chmodSync(hook, 0o755);
  const slurm = await startSlurm({
    home: loadConfig().DRYDOCK_HOME,
    clusterName: CLUSTER,
    nodes: [...NODE_NAMES.map((name) => ({ name, cpus: CPUS_PER_NODE })), { name: UNMATCHED, cpus: 1 }],
    prologSlurmctld: hook,
    epilogSlurmctld: hook,
    log,
  });
  teardown.add('stop Slurm (cancels every job)', () => slurm.stop());
  // The hook's files as they land (the bridge removes them at once): where a release's time goes.
  const hookFiles: { name: string; at: number }[] = [];
  const spoolWatch = watch(spool, (_, name) => {
    if (name) hookFiles.push({ name: String(name), at: performance.now() });
  });
  teardown.add('stop watching the spool', () => spoolWatch.close());
  const bridge = (spoolDir: string, sweepEvery: string) =>
    startBridgeProcess(
      {
        api: `http://127.0.0.1:${api.port}`,
        token,
        slurmConf: slurm.env.SLURM_CONF,
        spool: spoolDir,
        sweepEvery,
      },
      teardown,
    );
  const jobs = slurmJobs(slurm, call, options.pollMs, hookFiles);

  // ── 1. job end → released, idle cluster, hook on ───────────────────────────────────────────
  let running = bridge(spool, HOOK_SWEEP);
  await running.firstPass();
  const idleJobs = await jobs.submit(2 * n, (i) => ['-w', NODE_NAMES[i % NODE_NAMES.length]!]);
  await jobs.untilRecorded(idleJobs);
  log(`idle: ${2 * n} jobs recorded; cancelling them one at a time`);
  const idle = await jobs.timeEnds(idleJobs, running);
  log(
    `idle: bridge p50 ${summarize(timesOf(idle, 'bridge')).p50} ms, squeue p50 ${summarize(timesOf(idle, 'squeue')).p50} ms`,
  );
  await running.stop();

  // ── 1b. the same with the hook off: only the sweep (every 5 s) sees a job end ──────────────────
  running = bridge(silentSpool, `${NO_HOOK_SWEEP_MS / 1000}s`);
  await running.firstPass();
  const quietJobs = await jobs.submit(n, (i) => ['-w', NODE_NAMES[i % NODE_NAMES.length]!]);
  await jobs.untilRecorded(quietJobs);
  log(`hook off: ${n} jobs recorded; cancelling them across one ${NO_HOOK_SWEEP_MS / 1000} s sweep`);
  const noHook = await jobs.timeEndsSpread(quietJobs, NO_HOOK_SWEEP_MS);
  await running.stop();

  // ── 2. resync: R jobs running, no bridge; a cold start, then a warm one ───────────────────────
  const memoryBefore = memoryInMb(slurm.dir);
  const resyncJobs = await jobs.submit(r, () => ['-x', UNMATCHED]);
  await until('every resync job running', async () => (await jobs.runningOf(resyncJobs)) === r, 600_000, 500);
  const memoryPerJobMb = round((memoryInMb(slurm.dir) - memoryBefore) / r, 2);
  log(`resync: ${r} jobs running (${memoryPerJobMb} MB of memory each, PSS); no bridge`);
  const squeueMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const began = performance.now();
    const listed = (await slurm.slurmJson<SqueueAnswer>('squeue')).jobs;
    squeueMs.push(performance.now() - began);
    if (listed.filter((j) => RUNNING_STATES.has(j.job_state)).length < r) {
      throw new Error('squeue --json lists fewer running jobs than were started');
    }
  }
  log(`resync: one squeue --json of them takes ${summarize(squeueMs).p50} ms (median of 5)`);

  /** A bridge started and timed until its passes recorded `expected` jobs (cold: r, warm: none). */
  const resync = async (
    kind: string,
    expected: number,
  ): Promise<{ bridge: BridgeProcess; result: Resync }> => {
    // The previous bridge's long-poll is counted when it ends: let it end first.
    await until('no event long-poll open', async () => (await apiRequests(api.port)).longPolls === 0, 60_000);
    const before = await apiRequests(api.port);
    const apiCpu = await api.cpu();
    const started = bridge(spool, HOOK_SWEEP);
    const pass = await started.firstPass();
    // Cold, the first pass records them all; were it not so, the pass that completes them counts.
    const done = started.observedBy(pass) >= expected ? pass : await started.untilObserved(expected);
    const recorded = started.observedBy(done);
    const after = await untilQuiet(api.port);
    const bridgeCpuMs = processCpuMs(started.pid);
    const apiCpuAfter = await api.cpu();
    const calls = requestDiff(before.counts, after.counts);
    const result: Resync = {
      ms: round(done.at - started.spawnedAt),
      startupMs: round(started.lines[0]!.at - started.spawnedAt),
      recorded,
      passes: calls['GET /v1/nodes'] ?? 0,
      calls,
      callsTotal: sum(calls),
      writes: sum(Object.fromEntries(Object.entries(calls).filter(([k]) => !k.startsWith('GET ')))),
      failedCalls: sum(requestDiff(before.failed, after.failed)),
      bridgeCpuMs,
      apiCpuMs: round((apiCpuAfter.user - apiCpu.user + apiCpuAfter.system - apiCpu.system) / 1000, 1),
      bridgeRssMb: round(residentBytes(started.pid) / 2 ** 20, 1),
    };
    log(
      `resync ${kind}: first pass done in ${result.ms} ms (${recorded} recorded), ` +
        `${result.callsTotal} API calls in ${result.passes} passes`,
    );
    return { bridge: started, result };
  };
  const cold = await resync('cold', r);
  const live = await jobs.liveIds();
  if (!resyncJobs.every((id) => live.has(id))) throw new Error('the cold resync left jobs unrecorded');
  await cold.bridge.stop();
  const warm = await resync('warm', 0);

  // ── 1c. job end → released while the resync's jobs run (hook on, the warm bridge) ─────────────
  log(`busy: cancelling ${2 * busyPairs} of the ${r} running jobs one at a time`);
  const busy = await jobs.timeEnds(resyncJobs.slice(0, 2 * busyPairs), warm.bridge);
  await warm.bridge.stop();

  const failed = cold.result.failedCalls + warm.result.failedCalls;
  if (failed > 0) log(`the bridge's calls failed ${failed} times during the resyncs`);
  report({
    options,
    postgres: services.postgres,
    idle,
    busy,
    noHook,
    cold: cold.result,
    warm: warm.result,
    squeueMs,
    memoryPerJobMb,
  });
  return failed === 0 ? 0 : 1;
}

interface Measured {
  options: Options;
  postgres: unknown;
  /** Job ends timed on an idle cluster, while the resync's jobs ran, and with the hook off. */
  idle: EndSample[];
  busy: EndSample[];
  noHook: EndSample[];
  cold: Resync;
  warm: Resync;
  squeueMs: number[];
  memoryPerJobMb: number;
}

/** Prints the tables and writes the result with its figures. */
function report(m: Measured): void {
  const { options, idle, busy, noHook, cold, warm, memoryPerJobMb } = m;
  const n = options.jobs;
  const r = options.running;
  const squeueMedian = summarize(m.squeueMs).p50;
  const busyPairs = busy.length / 2;
  const stats = {
    idle: { bridge: summarize(timesOf(idle, 'bridge')), squeue: summarize(timesOf(idle, 'squeue')) },
    busy: { bridge: summarize(timesOf(busy, 'bridge')), squeue: summarize(timesOf(busy, 'squeue')) },
    noHook: summarize(noHook.map((s) => s.ms)),
  };
  const resolution = (samples: EndSample[], side: EndSample['side']) =>
    round(summarize(samples.filter((s) => s.side === side).map((s) => s.pollRoundTripMs)).mean);
  const scancel = summarize([...idle, ...busy].map((s) => s.scancelMs));
  const coldCallsPerJob = round(cold.callsTotal / r, 3);
  const warmCallsPerJob = round(warm.callsTotal / r, 3);
  const scale = r === RESYNC_DEFAULT ? '' : ` (quick; the full run: ${RESYNC_DEFAULT})`;
  const endRows = (what: string, s: { bridge: Summary; squeue: Summary }): Figure[] => [
    {
      figure: `Slurm job end → allocation released p99, ${what}, vs squeue --json saying it ended`,
      goal: `≤ ${GOAL_MS / 1000} s`,
      value: `${s.bridge.p99} ms (n ${s.bridge.count})`,
      baseline: `${s.squeue.p99} ms squeue`,
      ratio: round(s.bridge.p99 / s.squeue.p99, 2),
      met: s.bridge.p99 <= GOAL_MS,
    },
    {
      figure: `Slurm job end → allocation released p50, ${what}, vs squeue --json saying it ended`,
      goal: '— (reported)',
      value: `${s.bridge.p50} ms`,
      baseline: `${s.squeue.p50} ms squeue`,
      ratio: round(s.bridge.p50 / s.squeue.p50, 2),
      met: true,
    },
  ];
  const resyncRow = (kind: string, res: Resync, perJob: number): Figure => ({
    figure: `bridge restart, ${kind}: ${r} running jobs${scale}, start → first pass done`,
    goal: '— (reported)',
    value:
      `${round(res.ms / 1000, 2)} s, ${round(res.startupMs / 1000, 2)} s of it the program's start ` +
      `(${res.recorded} recorded; ${perJob} API calls/job, ${res.writes} writes)`,
    baseline: `${squeueMedian} ms one squeue --json`,
    ratio: round(res.ms / squeueMedian, 1),
    met: true,
  });
  const figures: Figure[] = [
    ...endRows('hook on, idle cluster', stats.idle),
    ...endRows(`hook on, ${r}→${r - 2 * busyPairs} jobs running`, stats.busy),
    {
      figure: `Slurm job end → allocation released p99, hook off (sweep every ${NO_HOOK_SWEEP_MS / 1000} s), idle`,
      goal: '— (reported)',
      value: `${stats.noHook.p99} ms (p50 ${stats.noHook.p50} ms, n ${stats.noHook.count})`,
      baseline: `${stats.idle.squeue.p99} ms squeue (idle)`,
      ratio: round(stats.noHook.p99 / stats.idle.squeue.p99, 1),
      met: true,
    },
    resyncRow('cold (Drydock holds none)', cold, coldCallsPerJob),
    resyncRow('warm (all recorded)', warm, warmCallsPerJob),
  ];

  const latencyRow = (label: string, s: Summary) => [label, s.count, s.p50, s.p99, s.max];
  /** The steps of the bridge side's releases, each from just before the scancel. */
  const steps: [string, (s: EndSample) => number | undefined][] = [
    ['scancel returned', (s) => s.scancelMs],
    ["the epilog hook's file in the spool", (s) => s.hookMs],
    ['the bridge logged its release', (s) => s.passMs],
    ['our poll saw it released', (s) => s.ms],
  ];
  const segments = (what: string, samples: EndSample[]) =>
    steps.map(([step, pick]) => {
      const times = samples.filter((s) => s.side === 'bridge').map(pick);
      return latencyRow(`${what}: ${step}`, summarize(times.filter((x) => x !== undefined)));
    });
  const env = environment();
  console.log(
    [
      '',
      `${NAME}: ${n} jobs a side; ${r} running for the resync; ${env.cpus} CPUs, load ${env.loadavg.join(' ')}`,
      `polls: API every ${options.pollMs} ms at most, round trip ${resolution(idle, 'bridge')} ms idle, ` +
        `${resolution(busy, 'bridge')} ms busy; squeue --json back to back, round trip ` +
        `${resolution(idle, 'squeue')} ms idle, ${resolution(busy, 'squeue')} ms busy; scancel p50 ${scancel.p50} ms`,
      '',
      formatTable(
        ['scancel → seen ended', 'n', 'p50 ms', 'p99 ms', 'max ms'],
        [
          latencyRow('bridge released it, hook on, idle', stats.idle.bridge),
          latencyRow('squeue says it ended, idle (baseline)', stats.idle.squeue),
          latencyRow(`bridge released it, hook on, ${r} running`, stats.busy.bridge),
          latencyRow(`squeue says it ended, ${r} running (baseline)`, stats.busy.squeue),
          latencyRow(`bridge released it, hook off (sweep ${NO_HOOK_SWEEP_MS / 1000} s)`, stats.noHook),
        ],
      ),
      '',
      formatTable(
        ['where a release goes (bridge side, from scancel)', 'n', 'p50 ms', 'p99 ms', 'max ms'],
        [...segments('idle', idle), ...segments(`${r} running`, busy)],
      ),
      '',
      formatTable(
        [
          'bridge start',
          'first pass ms',
          'startup ms',
          'pass ms',
          'recorded',
          'passes',
          'API calls',
          'calls/job',
          'writes',
          'bridge CPU ms',
          'API CPU ms',
          'bridge RSS MB',
        ],
        [cold, warm].map((x, i) => [
          i === 0 ? 'cold' : 'warm',
          x.ms,
          x.startupMs,
          round(x.ms - x.startupMs),
          x.recorded,
          x.passes,
          x.callsTotal,
          round(x.callsTotal / r, 3),
          x.writes,
          x.bridgeCpuMs,
          x.apiCpuMs,
          x.bridgeRssMb,
        ]),
      ),
      `baseline: one squeue --json of ${r} running jobs, median of 5: ${squeueMedian} ms; ` +
        `Slurm's memory (PSS) per running job: ${memoryPerJobMb} MB`,
      '',
      formatTable(
        ['API calls by route', 'cold', 'warm'],
        [...new Set([...Object.keys(cold.calls), ...Object.keys(warm.calls)])]
          .sort()
          .map((k) => [k, cold.calls[k] ?? 0, warm.calls[k] ?? 0]),
      ),
    ].join('\n'),
  );
  const path = writeResult(NAME, {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    environment: env,
    postgres: m.postgres,
    memoryPerJobMb,
    squeueMs: m.squeueMs.map((x) => round(x)),
    stats,
    resync: { cold, warm },
    figures,
    samples: { idle, busy, noHook },
  });
  console.log(`\nwrote ${path}`);
}

const timesOf = (samples: EndSample[], side: EndSample['side']) =>
  samples.filter((s) => s.side === side).map((s) => s.ms);

interface SqueueAnswer {
  jobs: { job_id: number; job_state: string }[];
}

/** Submitting, cancelling and watching jobs, on both sides. */
function slurmJobs(
  slurm: SlurmCluster,
  call: ApiCall,
  pollMs: number,
  hookFiles: { name: string; at: number }[],
) {
  const stateOf = async () =>
    new Map((await slurm.slurmJson<SqueueAnswer>('squeue')).jobs.map((j) => [String(j.job_id), j.job_state]));
  const isLive = async (job: string) => {
    const answer = await call('GET', `/v1/allocations?source=${SOURCE}&externalId=${job}&live=true`);
    if (answer.status !== 200) throw new Error(`GET /v1/allocations: ${answer.status}`);
    return (answer.body.items as unknown[]).length > 0;
  };
  const liveIds = async () => {
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const answer = await call(
        'GET',
        `/v1/allocations?source=${SOURCE}&live=true&limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      );
      if (answer.status !== 200) throw new Error(`GET /v1/allocations: ${answer.status}`);
      for (const a of answer.body.items as { externalId: string }[]) ids.add(a.externalId);
      cursor = answer.body.nextCursor as string | null;
    } while (cursor);
    return ids;
  };
  const scancel = async (job: string) => {
    const began = performance.now();
    await slurm.slurm('scancel', [job]);
    return performance.now() - began;
  };

  return {
    liveIds,
    async submit(count: number, placement: (i: number) => string[]): Promise<string[]> {
      const ids: string[] = new Array<string>(count);
      await paced(
        Array.from({ length: count }, (_, i) => i),
        { concurrency: 4 },
        async (i) => {
          const said = await slurm.slurm('sbatch', ['--parsable', ...placement(i), '--wrap', JOB]);
          ids[i] = said.trim().split(';')[0]!;
        },
      );
      return ids;
    },
    async untilRecorded(ids: string[]) {
      await until(
        'every job recorded by the bridge',
        async () => {
          const live = await liveIds();
          return ids.every((id) => live.has(id));
        },
        120_000,
        200,
      );
    },
    async runningOf(ids: string[]) {
      const states = await stateOf();
      return ids.filter((id) => RUNNING_STATES.has(states.get(id) ?? '')).length;
    },
    /**
     * Cancels each job in turn, timing alternately the bridge's release and squeue's word; after
     * squeue's, waits (untimed) for the bridge to release it too, so the next starts from rest.
     */
    async timeEnds(ids: string[], bridge: BridgeProcess): Promise<EndSample[]> {
      const samples: EndSample[] = [];
      for (const [i, job] of ids.entries()) {
        const side = i % 2 === 0 ? 'bridge' : 'squeue';
        const fromLine = bridge.lines.length;
        const began = performance.now();
        const scancelMs = await scancel(job);
        const seen =
          side === 'bridge'
            ? await pollUntil(async () => !(await isLive(job)), pollMs)
            : await pollUntil(async () => !RUNNING_STATES.has((await stateOf()).get(job) ?? ''), pollMs);
        // One job ends at a time: the first hook file named for it and the first release the bridge
        // logged are its (the line may come just after the release shows: a pass logs once done).
        const hook = hookFiles.find((f) => f.at >= began && f.name.startsWith(`${job}.`));
        const pass =
          side === 'bridge'
            ? await bridge.logged(`the release of ${job}`, fromLine, (l) => Number(l.fields.released) > 0)
            : undefined;
        samples.push({
          job,
          side,
          ms: round(seen.at - began),
          scancelMs: round(scancelMs),
          polls: seen.polls,
          pollRoundTripMs: round(seen.roundTripMs),
          hookMs: since(began, hook),
          passMs: since(began, pass),
        });
        if (side === 'squeue') await pollUntil(async () => !(await isLive(job)), pollMs);
      }
      return samples;
    },
    /**
     * Cancels the jobs one after another across `spanMs` (so they fall on every phase of a sweep),
     * polling the live list meanwhile; each is timed from just before its scancel to the first
     * list without it.
     */
    async timeEndsSpread(ids: string[], spanMs: number): Promise<EndSample[]> {
      const cancelled = new Map<string, { began: number; scancelMs: number }>();
      const released = new Map<string, { at: number; polls: number }>();
      let polls = 0;
      let pollTime = 0;
      const watching = (async () => {
        const deadline = performance.now() + spanMs + 60_000;
        while (released.size < ids.length) {
          const began = performance.now();
          const live = await liveIds();
          const at = performance.now();
          polls++;
          pollTime += at - began;
          for (const job of cancelled.keys()) {
            if (!released.has(job) && !live.has(job)) released.set(job, { at, polls });
          }
          if (at > deadline) throw new Error(`hook off: ${ids.length - released.size} jobs never released`);
          await sleep(Math.max(0, began + pollMs - performance.now()));
        }
      })();
      await paced(ids, { concurrency: 1, ratePerSecond: ids.length / (spanMs / 1000) }, async (job) => {
        const entry = { began: performance.now(), scancelMs: 0 };
        cancelled.set(job, entry);
        entry.scancelMs = round(await scancel(job));
      });
      await watching;
      return ids.map((job) => {
        const { began, scancelMs } = cancelled.get(job)!;
        const seen = released.get(job)!;
        return {
          job,
          side: 'bridge' as const,
          ms: round(seen.at - began),
          scancelMs,
          polls: seen.polls,
          pollRoundTripMs: round(pollTime / polls),
        };
      });
    },
  };
}

const since = (began: number, seen: { at: number } | undefined) =>
  seen ? round(seen.at - began) : undefined;

/** Polls `check` back to back, starting one at most every `intervalMs`, until it holds. */
async function pollUntil(check: () => Promise<boolean>, intervalMs: number, timeoutMs = 60_000) {
  const first = performance.now();
  let polls = 0;
  let spent = 0;
  for (;;) {
    const began = performance.now();
    const done = await check();
    const at = performance.now();
    polls++;
    spent += at - began;
    if (done) return { at, polls, roundTripMs: spent / polls };
    if (at - first > timeoutMs) throw new Error(`not seen within ${timeoutMs / 1000} s`);
    await sleep(Math.max(0, began + intervalMs - performance.now()));
  }
}

// ── the bridge as its own process ───────────────────────────────────────────────────────────────

interface BridgeLine {
  /** performance.now() when this process read the line. */
  at: number;
  fields: Record<string, unknown>;
}

interface BridgeProcess {
  pid: number;
  spawnedAt: number;
  lines: BridgeLine[];
  /** The end of its first pass: the line naming the Slurm node Drydock does not know. */
  firstPass(): Promise<BridgeLine>;
  /** Jobs its passes said they recorded, up to and with `line`. */
  observedBy(line: BridgeLine): number;
  untilObserved(count: number): Promise<BridgeLine>;
  /** The first line from index `from` on for which `match` holds, as soon as it is read. */
  logged(what: string, from: number, match: (line: BridgeLine) => boolean): Promise<BridgeLine>;
  stop(): Promise<void>;
}

/** `node bin/drydock-bridge.mjs --json slurm …` with only the environment it documents. */
function startBridgeProcess(
  o: { api: string; token: string; slurmConf: string; spool: string; sweepEvery: string },
  teardown: Teardown,
): BridgeProcess {
  const spawnedAt = performance.now();
  const args = ['--json', 'slurm', '--cluster', CLUSTER, '--spool', o.spool, '--sweep-every', o.sweepEvery];
  const child = spawn(process.execPath, [BRIDGE, ...args], {
    env: { PATH: process.env.PATH, SLURM_CONF: o.slurmConf, DRYDOCK_API: o.api, DRYDOCK_TOKEN: o.token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: BridgeLine[] = [];
  const waiting = new Set<() => void>();
  createInterface({ input: child.stderr! }).on('line', (text) => {
    let fields: Record<string, unknown>;
    try {
      fields = JSON.parse(text) as Record<string, unknown>;
    } catch {
      fields = { level: 'text', message: text };
    }
    lines.push({ at: performance.now(), fields });
    for (const wake of waiting) wake();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const observed = (upTo: number) =>
    lines
      .slice(0, upTo)
      .reduce((n, l) => n + (typeof l.fields.observed === 'number' ? l.fields.observed : 0), 0);
  /** The first line for which `match` holds, as soon as it is read. */
  const line = (what: string, match: (l: BridgeLine, index: number) => boolean, timeoutMs = 120_000) =>
    new Promise<BridgeLine>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`the bridge: no ${what} within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      const check = () => {
        const found = lines.find(match);
        if (found) finish(null, found);
        else if (gone()) finish(new Error(`the bridge exited before ${what}`));
      };
      const finish = (error: Error | null, found?: BridgeLine) => {
        clearTimeout(timer);
        waiting.delete(check);
        if (found) resolve(found);
        else
          reject(
            new Error(
              `${error!.message}; it said:\n${lines.map((l) => JSON.stringify(l.fields)).join('\n')}`,
            ),
          );
      };
      waiting.add(check);
      void exited.then(check);
      check();
    });
  const stop = async () => {
    if (!gone()) child.kill('SIGTERM');
    await exited;
  };
  teardown.add('stop the bridge', stop);
  return {
    pid: child.pid!,
    spawnedAt,
    lines,
    firstPass: () =>
      line(
        'first pass',
        (l) =>
          String(l.fields.message).includes('no Drydock node') &&
          String(l.fields.message).includes(UNMATCHED),
      ),
    observedBy: (l) => observed(lines.indexOf(l) + 1),
    untilObserved: (count) => line(`${count} jobs recorded`, (_, i) => observed(i + 1) >= count),
    logged: (what, from, match) => line(what, (l, i) => i >= from && match(l)),
    stop,
  };
}

// ── the API's own request counts ───────────────────────────────────────────────────────────────

const COUNT_LINE = /^drydock_http_request_duration_seconds_count\{([^}]*)\} (\d+)$/;
const LONG_POLLS = /^drydock_long_polls_waiting\{feed="events"\} (\d+)$/;

/** Requests the API answered so far by `METHOD route` (/metrics left out), those not 2xx, and its open event long-polls. */
async function apiRequests(port: number) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const counts: Record<string, number> = {};
  const failed: Record<string, number> = {};
  let longPolls = 0;
  for (const metric of text.split('\n')) {
    const polls = LONG_POLLS.exec(metric);
    if (polls) longPolls = Number(polls[1]);
    const match = COUNT_LINE.exec(metric);
    if (!match) continue;
    const labels = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.route === '/metrics') continue;
    const name = `${labels.method} ${labels.route}`;
    counts[name] = (counts[name] ?? 0) + Number(match[2]);
    if (!String(labels.status).startsWith('2')) failed[name] = (failed[name] ?? 0) + Number(match[2]);
  }
  return { counts, failed, longPolls };
}

/** What the API answered between two counts. */
function requestDiff(before: Record<string, number>, after: Record<string, number>) {
  const diff: Record<string, number> = {};
  for (const [name, count] of Object.entries(after)) {
    const d = count - (before[name] ?? 0);
    if (d > 0) diff[name] = d;
  }
  return diff;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Waits until the API answered nothing for QUIET_MS and a long-poll (the bridge's feed) waits. */
async function untilQuiet(port: number, timeoutMs = 120_000) {
  const deadline = performance.now() + timeoutMs;
  let last = await apiRequests(port);
  let since = performance.now();
  for (;;) {
    await sleep(200);
    const now = await apiRequests(port);
    if (sum(now.counts) !== sum(last.counts)) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= QUIET_MS && now.longPolls > 0) {
      return now;
    }
    if (performance.now() > deadline) throw new Error('the bridge never went quiet');
  }
}

/**
 * The proportional set size (shared pages split among their users) of every process working in
 * the cluster's dir, in MB: its daemons, and each job's slurmstepd and what it runs, which start in
 * the directory sbatch ran in (scripts/services/slurm.ts kills them there).
 */
function memoryInMb(dir: string): number {
  let kb = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      kb += Number(/^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${entry}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return kb / 1024;
}
