/**
 * heartbeats: how many agent heartbeats one API process absorbs, last-seen times flushed to
 * Postgres in one batch every 15 s (issue 4, item 10; docs/lifecycle/liveness.md). Goal: ≥ 5,000/s.
 *
 * A throwaway database with one pool; the API in a child process (bench/support/api-process.ts,
 * production's 15 s flush, no Temporal: no route used here needs it). N simulated agents (default
 * 1,000, so that the run stays near 90 s: enrolling is setup, and costs ~25 ms of a shared 2-core
 * host per agent) join through the API with join tokens and send their first heartbeat (the `connect`
 * transaction) with the agent's own session code (agent/simulator.ts, heartbeat-only); then their
 * sessions are stopped and this process sends their heartbeats itself, as fast as C requests in
 * flight allow (default 64, over keep-alive connections), taking the agents in turn, for a warm-up
 * and a measured window long enough to hold a flush (default 20 s).
 *
 * Baseline, in the same run: `GET /healthz` (no auth, no database) from the same load generator at
 * the same concurrency against the same API process; the figure is heartbeats/s as a share of
 * that bare HTTP rate, next to the absolute rate against the goal. The API times each flush
 * (Heartbeats' `onFlush`) and reports them over IPC. Afterwards the pending times are flushed, and
 * every agent's `last_seen_at` (and `telemetry_current`) must be at or after the send time of its
 * last acknowledged heartbeat: nothing the API acknowledged was lost.
 *
 * The API resolves a node credential from Postgres unless it did so in the last 500 ms
 * (api/node-credentials.ts); real agents beat every 10 s, so in production every heartbeat is a
 * miss. The table reports the share of heartbeats that came within 500 ms of the same agent's
 * previous one (those may have been cache hits): with few agents and a high rate the figure
 * flatters production, and --agents should be raised.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createSimulator } from '../agent/simulator';
import { createDb } from '../db/client';
import { pools } from '../db/schema';
import { hashSecret } from '../domain/secrets';
import { startApiProcess, type ApiFlush, type ApiProcess } from './support/api-process';
import { defineBenchmark, intOption, measured, UsageError, type Log } from './support/benchmark';
import { cpuBetween, cpuMark, findPostmaster, type CpuMark, type CpuSplit } from './support/cpu';
import { summarizeProfileFile, type ProfileSummary } from './support/cpu-profile';
import { runHttpLoad, type HttpCall } from './support/http-load';
import { until } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startBenchDatabase } from './support/services';
import { median, round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'heartbeats';
const projectRoot = fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, '');

/** The goal of issue 4, item 10. */
const GOAL_PER_SECOND = 5_000;
/** How long the API trusts a resolved node credential (api/node-credentials.ts). */
const CREDENTIAL_CACHE_MS = 500;
const POOL = 'bench-hb';
/** Joins in flight while the agents enrol, and the join tokens they share (setup, not measured). */
const JOIN_CONCURRENCY = 32;
const JOIN_TOKENS = 16;

const usage = [
  '  --agents N            simulated agents, joined through the API (default 1000; enrolling',
  '                        them is setup, ~40 joins/s on a busy 2-core host)',
  '  --seconds S           measured heartbeat window (default 20: it holds a 15 s flush)',
  '  --baseline-seconds B  measured GET /healthz window (default 8)',
  '  --warmup W            seconds of load before each window, not counted (default 2)',
  '  --concurrency C       requests in flight (default 64)',
  "  --flush-ms F          the API's heartbeat flush interval (default 15000, production's)",
  "  --api-connections P   the API's Postgres pool size (default 10, as createDb in production)",
  '  --profile             V8 CPU profile of the API process in each window, summarized; the',
  '                        .cpuprofile files are kept in a temporary directory (printed)',
].join('\n');

interface Options {
  agents: number;
  seconds: number;
  baselineSeconds: number;
  warmup: number;
  concurrency: number;
  flushMs: number;
  apiConnections: number;
  profile: boolean;
}

function parseOptions(args: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        agents: { type: 'string' },
        seconds: { type: 'string' },
        'baseline-seconds': { type: 'string' },
        warmup: { type: 'string' },
        concurrency: { type: 'string' },
        'flush-ms': { type: 'string' },
        'api-connections': { type: 'string' },
        profile: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return {
    agents: intOption('agents', values.agents, 1000, 1, 50_000),
    seconds: intOption('seconds', values.seconds, 20, 1, 600),
    baselineSeconds: intOption('baseline-seconds', values['baseline-seconds'], 8, 1, 600),
    warmup: intOption('warmup', values.warmup, 2, 0, 60),
    concurrency: intOption('concurrency', values.concurrency, 64, 1, 1024),
    flushMs: intOption('flush-ms', values['flush-ms'], 15_000, 100, 600_000),
    apiConnections: intOption('api-connections', values['api-connections'], 10, 1, 100),
    profile: values.profile ?? false,
  };
}

export default defineBenchmark({
  summary: 'simulated agents → heartbeats/s one API process absorbs (flush every 15 s), against GET /healthz',
  usage,
  quick: ['--seconds', '16', '--baseline-seconds', '4', '--warmup', '1'],
  run: measured(parseOptions, measure),
});

interface Phase {
  requestsPerSecond: number;
  latency: Summary;
  sent: number;
  succeeded: number;
  failed: number;
  failures: string[];
  statusCounts: Record<string, number>;
  /** Epoch ms of the window's edges. */
  window: { start: number; end: number };
  cpu: CpuSplit;
  apiEventLoopBusy: number;
  profile?: { path: string; summary: ProfileSummary };
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const N = options.agents;
  const C = options.concurrency;
  const loadBefore = loadavg().map((x) => round(x));
  log(
    `${NAME}: ${N} agents, ${C} in flight, ${options.seconds} s heartbeats + ${options.baselineSeconds} s ` +
      `/healthz (+${options.warmup} s warm-up each), flush every ${options.flushMs} ms`,
  );

  // ── the database, the API, a join token ────────────────────────────────────────────────────
  const services = await startBenchDatabase(teardown, log);
  log(`postgres: ${services.postgres.source} (${services.postgres.database}); no Temporal`);
  const setup = createDb(services.databaseUrl, { max: 2 });
  teardown.add('close the setup pool', () => setup.close());
  await setup.db.insert(pools).values({ id: POOL, kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
  const postmaster = await findPostmaster(setup.sql);
  if (postmaster === null) log('postgres: its processes are not visible here; no CPU figure for it');

  const suffix = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const api = await startApiProcess(
    {
      databaseUrl: services.databaseUrl,
      taskQueue: `bench-heartbeats-${suffix}`,
      bootstrapKeyHash: hashSecret(operatorKey),
      connections: options.apiConnections,
      heartbeatFlushEveryMs: options.flushMs,
    },
    teardown,
  );
  const base = `http://127.0.0.1:${api.port}`;
  log(`API process ${api.pid} listening on :${api.port}`);
  // Several tokens: a join holds its token's row lock until it commits, so one token would
  // serialize the enrolment (setup, not measured).
  const tokens: string[] = [];
  for (let t = 0; t < JOIN_TOKENS; t++) {
    const reply = await fetch(`${base}/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ poolId: POOL, ttl: '1h', maxUses: 0, description: `bench heartbeats ${t}` }),
    });
    if (reply.status !== 201) throw new Error(`join token: ${reply.status} ${await reply.text()}`);
    tokens.push(((await reply.json()) as { secret: string }).secret);
  }

  // ── the agents: join, first heartbeat (connect) with the agent's session code, then stop ────
  const joinStarted = performance.now();
  const simulator = await createSimulator({
    api: base,
    machines: Array.from({ length: N }, (_, i) => ({
      hostname: `bench-hb-${String(i + 1).padStart(5, '0')}`,
      token: tokens[i % tokens.length],
    })),
    commands: false,
    maxSockets: C,
    joinConcurrency: JOIN_CONCURRENCY,
  });
  teardown.add('close the simulator', () => simulator.close());
  const joinSeconds = (performance.now() - joinStarted) / 1000;
  log(`${N} agents joined in ${joinSeconds.toFixed(1)} s (${round(N / joinSeconds, 1)}/s)`);
  await until(
    'every agent heartbeated once',
    async () => simulator.agents.every((a) => a.session.heartbeats > 0),
    120_000,
  );
  await simulator.close();
  const connectSeconds = (performance.now() - joinStarted) / 1000 - joinSeconds;
  log(`every agent connected (${connectSeconds.toFixed(1)} s); sessions stopped`);
  const agents = simulator.agents.map((a) => ({ nodeId: a.nodeId, credential: a.identity.credential }));

  const profileDir = options.profile ? join(tmpdir(), `drydock-bench-heartbeats-profiles-${suffix}`) : null;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  // ── the baseline: GET /healthz at the same concurrency ─────────────────────────────────────
  const healthz = await runPhase({
    name: 'healthz',
    api,
    postmaster,
    profileDir,
    concurrency: C,
    warmupMs: options.warmup * 1000,
    seconds: options.baselineSeconds,
    next: () => ({ method: 'GET', path: '/healthz' }),
  });
  log(
    `healthz: ${healthz.requestsPerSecond} req/s, p50 ${healthz.latency.p50} ms, p99 ${healthz.latency.p99} ms`,
  );

  // ── heartbeats: the agents in turn, each with its own credential ───────────────────────────
  const lastAckedSentAt = new Array<number>(N).fill(0);
  const lastSentAt = new Array<number>(N).fill(0);
  const gaps: number[] = [];
  let withinCache = 0;
  let cursor = 0;
  const body = '{}';
  const heartbeats = await runPhase({
    name: 'heartbeat',
    api,
    postmaster,
    profileDir,
    concurrency: C,
    warmupMs: options.warmup * 1000,
    seconds: options.seconds,
    next(): HttpCall {
      const i = cursor++ % N;
      const sentAt = Date.now();
      if (lastSentAt[i]! > 0) {
        const gap = sentAt - lastSentAt[i]!;
        if (gap < CREDENTIAL_CACHE_MS) withinCache++;
        if (gaps.length < 100_000) gaps.push(gap);
      }
      lastSentAt[i] = sentAt;
      return {
        method: 'POST',
        path: '/v1/agent/heartbeat',
        body,
        headers: { authorization: `Bearer ${agents[i]!.credential}` },
        done: (ok) => {
          if (ok && sentAt > lastAckedSentAt[i]!) lastAckedSentAt[i] = sentAt;
        },
      };
    },
  });
  log(
    `heartbeat: ${heartbeats.requestsPerSecond} req/s, p50 ${heartbeats.latency.p50} ms, ` +
      `p99 ${heartbeats.latency.p99} ms, ${heartbeats.failed} failed`,
  );

  // ── the flushes, and proof that every acknowledged heartbeat reached Postgres ──────────────
  const timerFlushes = await api.flushes();
  const finalStarted = performance.now();
  await api.flushHeartbeats();
  const finalFlushMs = performance.now() - finalStarted;
  const allFlushes = await api.flushes();
  const finalFlush = allFlushes.length > timerFlushes.length ? allFlushes[allFlushes.length - 1]! : null;
  const inWindow = timerFlushes.filter(
    (f) => f.at >= heartbeats.window.start && f.at <= heartbeats.window.end,
  );
  const proof = await checkFlushed(setup.sql, agents, lastAckedSentAt, heartbeats.window.start);
  log(
    `flushes in the window: ${inWindow.map((f) => `${f.rows} rows in ${round(f.durationMs)} ms`).join(', ') || 'none'}; ` +
      `${proof.flushed}/${N} agents' last heartbeat flushed`,
  );

  const sentTotal = heartbeats.sent;
  const result = report({
    options,
    services,
    loadBefore,
    joinSeconds,
    connectSeconds,
    healthz,
    heartbeats,
    flushes: { all: allFlushes, inWindow, final: finalFlush, finalRoundTripMs: finalFlushMs },
    proof,
    credentialCache: {
      cacheMs: CREDENTIAL_CACHE_MS,
      withinCacheShare: round(withinCache / Math.max(1, sentTotal - N), 3),
      medianGapMs: median(gaps),
    },
    postgresVisible: postmaster !== null,
    profileDir,
  });
  const path = writeResult(NAME, result);
  console.log(`\nwrote ${path}`);
  if (profileDir) console.log(`CPU profiles (open in Chrome DevTools or VS Code): ${profileDir}`);
  return heartbeats.failed === 0 && proof.missing === 0 && proof.sessions === N ? 0 : 1;
}

async function runPhase(input: {
  name: string;
  api: ApiProcess;
  postmaster: number | null;
  profileDir: string | null;
  concurrency: number;
  warmupMs: number;
  seconds: number;
  next: (lane: number) => HttpCall;
}): Promise<Phase> {
  const { api, postmaster } = input;
  let start: CpuMark | undefined;
  let end: CpuMark | undefined;
  const window = { start: 0, end: 0 };
  let loopStart: Promise<ReturnType<typeof performance.eventLoopUtilization>> | undefined;
  let loopEnd: Promise<ReturnType<typeof performance.eventLoopUtilization>> | undefined;
  const profilePath = input.profileDir ? join(input.profileDir, `api-${input.name}.cpuprofile`) : null;
  const load = await runHttpLoad({
    port: api.port,
    headers: {},
    concurrency: input.concurrency,
    warmupMs: input.warmupMs,
    durationMs: input.seconds * 1000,
    next: input.next,
    async onWindow(edge) {
      if (edge === 'start') {
        window.start = Date.now();
        start = cpuMark({ api: api.pid }, postmaster);
        loopStart = api.eventLoop();
        if (profilePath) await api.profileStart();
      } else {
        window.end = Date.now();
        end = cpuMark({ api: api.pid }, postmaster);
        loopEnd = api.eventLoop();
        if (profilePath) await api.profileStop(profilePath);
      }
    },
  });
  const [a, b] = await Promise.all([loopStart!, loopEnd!]);
  return {
    requestsPerSecond: round(load.latenciesMs.length / input.seconds, 1),
    latency: summarize(load.latenciesMs),
    sent: load.sent,
    succeeded: load.succeeded,
    failed: load.failed,
    failures: load.failures,
    statusCounts: load.statusCounts,
    window,
    cpu: cpuBetween(start!, end!, 'loadGenerator'),
    apiEventLoopBusy: round(performance.eventLoopUtilization(b, a).utilization, 3),
    ...(profilePath
      ? { profile: { path: profilePath, summary: summarizeProfileFile(profilePath, projectRoot) } }
      : {}),
  };
}

interface Proof {
  agents: number;
  /** Agents whose last_seen_at is at or after the send time of their last acknowledged heartbeat. */
  flushed: number;
  missing: number;
  /** Agents whose telemetry_current.last_heartbeat_at equals their last_seen_at. */
  telemetryMatches: number;
  /** Agents seen (last_seen_at) inside the measured window or after. */
  seenSinceWindowStart: number;
  /** node.connected events: one per agent means no session timed out and started again. */
  sessions: number;
  disconnected: number;
}

async function checkFlushed(
  sql: ReturnType<typeof createDb>['sql'],
  agents: { nodeId: string }[],
  lastAckedSentAt: number[],
  windowStart: number,
): Promise<Proof> {
  const expected = JSON.stringify(
    agents.map((a, i) => ({ id: a.nodeId, sent: new Date(lastAckedSentAt[i] || 0).toISOString() })),
  );
  const [row] = await sql<
    { flushed: string; missing: string; telemetry: string; recent: string; connected: string; gone: string }[]
  >`
    with expected as (select * from jsonb_to_recordset(${expected}::jsonb) as e(id text, sent timestamptz))
    select
      count(*) filter (where n.last_seen_at >= e.sent)::text as flushed,
      count(*) filter (where n.last_seen_at is null or n.last_seen_at < e.sent)::text as missing,
      count(*) filter (where t.last_heartbeat_at = n.last_seen_at)::text as telemetry,
      count(*) filter (where n.last_seen_at >= ${new Date(windowStart).toISOString()}::timestamptz)::text as recent,
      (select count(*) from events where type = 'node.connected' and node_id in (select id from expected))::text as connected,
      (select count(*) from events where type = 'node.disconnected' and node_id in (select id from expected))::text as gone
    from expected e
    join nodes n on n.id = e.id
    left join telemetry_current t on t.node_id = n.id`;
  return {
    agents: agents.length,
    flushed: Number(row!.flushed),
    missing: Number(row!.missing),
    telemetryMatches: Number(row!.telemetry),
    seenSinceWindowStart: Number(row!.recent),
    sessions: Number(row!.connected),
    disconnected: Number(row!.gone),
  };
}

function report(input: {
  options: Options;
  services: Awaited<ReturnType<typeof startBenchDatabase>>;
  loadBefore: number[];
  joinSeconds: number;
  connectSeconds: number;
  healthz: Phase;
  heartbeats: Phase;
  flushes: { all: ApiFlush[]; inWindow: ApiFlush[]; final: ApiFlush | null; finalRoundTripMs: number };
  proof: Proof;
  credentialCache: { cacheMs: number; withinCacheShare: number; medianGapMs: number };
  postgresVisible: boolean;
  profileDir: string | null;
}) {
  const { options, healthz, heartbeats, proof, flushes } = input;
  const environ = environment();
  const ratio = round(heartbeats.requestsPerSecond / healthz.requestsPerSecond, 3);
  // CPU per request is steadier than a rate on a shared host: it does not move when others take
  // the API's core. What one full core could absorb follows from it.
  const apiMs = (p: Phase) =>
    p.cpu.cores.api === null || p.cpu.cores.api === undefined
      ? null
      : (p.cpu.cores.api * 1000) / p.requestsPerSecond;
  const heartbeatApiMs = apiMs(heartbeats);
  const healthzApiMs = apiMs(healthz);
  const cpu = {
    heartbeatApiMs: heartbeatApiMs === null ? null : round(heartbeatApiMs, 3),
    healthzApiMs: healthzApiMs === null ? null : round(healthzApiMs, 3),
    ratio: heartbeatApiMs && healthzApiMs ? round(healthzApiMs / heartbeatApiMs, 3) : null,
    heartbeatsPerApiCore: heartbeatApiMs ? Math.round(1000 / heartbeatApiMs) : null,
    healthzPerApiCore: healthzApiMs ? Math.round(1000 / healthzApiMs) : null,
  };
  const goals = {
    throughput: heartbeats.requestsPerSecond >= GOAL_PER_SECOND,
    noErrors: heartbeats.failed === 0,
    nothingLost: proof.missing === 0 && proof.flushed === proof.agents,
    flushInWindow: flushes.inWindow.length > 0,
  };
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const cores = (v: number | null | undefined) => (v === null || v === undefined ? '-' : v.toFixed(2));
  const perRequest = (phase: Phase, v: number | null | undefined) =>
    v === null || v === undefined ? '-' : round((v * 1000) / phase.requestsPerSecond, 3);
  const phases: [string, Phase][] = [
    ['GET /healthz', healthz],
    ['POST /v1/agent/heartbeat', heartbeats],
  ];
  const durations = summarize(flushes.inWindow.map((f) => f.durationMs));
  const lines = [
    '',
    `${NAME}: ${options.agents} agents, ${options.concurrency} in flight, heartbeat window ` +
      `${options.seconds} s, /healthz window ${options.baselineSeconds} s (+${options.warmup} s warm-up each); ` +
      `flush every ${options.flushMs} ms; API pool ${options.apiConnections}`,
    `postgres ${input.services.postgres.source}; ${environ.cpus} CPUs, load ${input.loadBefore.join(' ')} ` +
      `before, ${environ.loadavg.join(' ')} after; agents joined in ${round(input.joinSeconds, 1)} s, ` +
      `connected in ${round(input.connectSeconds, 1)} s more`,
    '',
    formatTable(
      ['phase', 'req/s', 'p50', 'p90', 'p99', 'max', 'errors', 'API loop busy'],
      phases.map(([name, p]) => [
        name,
        p.requestsPerSecond,
        p.latency.p50,
        p.latency.p90,
        p.latency.p99,
        p.latency.max,
        p.failed,
        `${Math.round(p.apiEventLoopBusy * 100)}%`,
      ]),
    ),
    '(latencies in ms; a request counts when it completes inside the window)',
    '',
    formatTable(
      ['', 'figure', 'goal', 'met'],
      [
        ['heartbeats/s', heartbeats.requestsPerSecond, `≥ ${GOAL_PER_SECOND}`, yes(goals.throughput)],
        ['heartbeats/s ÷ /healthz req/s', `${ratio}×`, '', ''],
        ['the same by API CPU per request', cpu.ratio === null ? '-' : `${cpu.ratio}×`, '', ''],
        [
          'heartbeats/s one full API core would absorb',
          cpu.heartbeatsPerApiCore ?? '-',
          `≥ ${GOAL_PER_SECOND}`,
          cpu.heartbeatsPerApiCore === null ? '-' : yes(cpu.heartbeatsPerApiCore >= GOAL_PER_SECOND),
        ],
        ['/healthz req/s one full API core would answer', cpu.healthzPerApiCore ?? '-', '', ''],
        ['heartbeat errors', heartbeats.failed, '0', yes(goals.noErrors)],
        [
          'agents whose last acked heartbeat was flushed',
          `${proof.flushed}/${proof.agents}`,
          'all',
          yes(goals.nothingLost),
        ],
        ['timer flushes in the window', flushes.inWindow.length, '≥ 1', yes(goals.flushInWindow)],
      ],
    ),
    '',
    formatTable(
      ['heartbeat flushes', 'count', 'rows', 'p50 ms', 'max ms'],
      [
        [
          'timer, in the window',
          flushes.inWindow.length,
          flushes.inWindow.map((f) => f.rows).join(' ') || '-',
          durations.p50,
          durations.max,
        ],
        ...(flushes.final
          ? [['final (after the load)', 1, flushes.final.rows, round(flushes.final.durationMs), '']]
          : []),
        [
          'all of the run',
          flushes.all.length,
          flushes.all.reduce((sum, f) => sum + f.rows, 0),
          summarize(flushes.all.map((f) => f.durationMs)).p50,
          summarize(flushes.all.map((f) => f.durationMs)).max,
        ],
      ],
    ),
    '',
    formatTable(
      ['cores used in the window', 'load generator', 'API', 'postgres', 'machine', 'other'],
      phases.map(([name, p]) => [
        name,
        cores(p.cpu.cores.loadGenerator),
        cores(p.cpu.cores.api),
        cores(p.cpu.cores.postgres),
        cores(p.cpu.cores.machine),
        cores(p.cpu.cores.other),
      ]),
    ),
    '',
    formatTable(
      ['CPU ms per request', 'load generator', 'API', 'postgres'],
      phases.map(([name, p]) => [
        name,
        perRequest(p, p.cpu.cores.loadGenerator),
        perRequest(p, p.cpu.cores.api),
        perRequest(p, p.cpu.cores.postgres),
      ]),
    ),
    '("other" is the rest of the machine: other people\'s work on a shared host)',
    '',
    `sessions: ${proof.sessions} node.connected for ${proof.agents} agents (one each: no session timed out), ` +
      `${proof.disconnected} node.disconnected; telemetry_current matches last_seen_at for ` +
      `${proof.telemetryMatches}/${proof.agents}; ${proof.seenSinceWindowStart} agents seen since the window opened`,
    `credential cache: ${round(input.credentialCache.withinCacheShare * 100, 1)}% of heartbeats came within ` +
      `${input.credentialCache.cacheMs} ms of the same agent's previous one (may have hit the cache; ` +
      `production: 0%, agents beat every 10 s); median gap ${input.credentialCache.medianGapMs} ms`,
  ];
  for (const [name, p] of phases) {
    const profile = p.profile?.summary;
    if (!profile) continue;
    lines.push(
      '',
      `${name}: API CPU profile (main thread), ${profile.busyMs} ms busy of ${profile.wallMs} ms: ` +
        `${round(profile.busyMs / Math.max(1, p.latency.count), 3)} ms per request`,
      formatTable(
        ['by innermost package or file on the stack', 'ms', '%'],
        profile.byLibrary.slice(0, 15).map((e) => [e.name, e.ms, e.percent]),
      ),
      '',
      formatTable(
        ['self time by function', 'ms', '%'],
        profile.byFunction.slice(0, 20).map((e) => [e.name, e.ms, e.percent]),
      ),
    );
  }
  console.log(lines.join('\n'));
  return {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    goals: { heartbeatsPerSecond: GOAL_PER_SECOND, errors: 0 },
    environment: { ...environ, loadavgBefore: input.loadBefore },
    services: input.services,
    postgresCpuVisible: input.postgresVisible,
    joinSeconds: round(input.joinSeconds, 2),
    connectSeconds: round(input.connectSeconds, 2),
    healthz,
    heartbeats,
    ratio,
    cpu,
    met: goals,
    flushes: { ...flushes, inWindowDurationMs: durations },
    proof,
    credentialCache: input.credentialCache,
    profileDir: input.profileDir,
  };
}
