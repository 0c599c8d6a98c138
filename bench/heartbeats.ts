/**
 * heartbeats: how many agent heartbeats one API process absorbs, last-seen times flushed to
 * Postgres in one batch every 15 s (docs/lifecycle/liveness.md), against `GET /healthz` on the
 * same process in the same run (issue 29). Goal: steady heartbeats/s ≥ 0.8× /healthz req/s, as
 * the median of 5 paired rounds (a /healthz window, then a heartbeat window right after it).
 *
 * A throwaway database with one pool and N node identities (default 20,000) inserted directly,
 * adopted, connected and alive, each with its own credential (enrolling through the API is
 * ~25 ms of a shared 2-core host per agent, and not what is measured). The API runs in a child
 * process (bench/support/api-process.ts, production's 15 s flush, no Temporal: no route used here
 * needs it). This process sends the heartbeats, as fast as C requests in flight allow (default 64,
 * over keep-alive connections), each with its identity's credential, in three windows:
 *
 *   /healthz  the baseline: no auth, no database
 *   cold      the first heartbeat of each identity, in turn, none repeated: the API resolves the
 *             credential from Postgres and starts the session (the connect transaction; the node
 *             is already connected, so it changes nothing) — as after an API process restarts
 *   steady    the identities the cold window reached, in turn, again and again: the credential is
 *             cached (api/node-credentials.ts keeps it until a committed change to the node or its
 *             credentials names it) — production, where each process sees each of its agents every
 *             10 s; nothing here depends on how soon an agent beats again
 *   rounds    R pairs of short windows (default 5), /healthz then steady beats: on a shared host
 *             the load of others drifts within a run, and two windows seconds apart drift less
 *             than two a minute apart; the goal is judged on the median of the pairs' ratios
 *
 * The API times each flush (Heartbeats' `onFlush`) and reports them over IPC. Afterwards the
 * pending times are flushed, and every identity's `last_seen_at` (and `telemetry_current`) must be
 * at or after the send time of its last acknowledged heartbeat: nothing the API acknowledged was
 * lost; and no session was closed or started anew (no `node.disconnected`, no `node.connected`).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb } from '../db/client';
import { nodeCredentials, nodes, pools } from '../db/schema';
import { newId } from '../domain/ids';
import { hashSecret, newSecret } from '../domain/secrets';
import { startApiProcess, type ApiFlush, type ApiProcess } from './support/api-process';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { cpuBetween, cpuMark, findPostmaster, type CpuMark, type CpuSplit } from './support/cpu';
import { summarizeProfileFile, type ProfileSummary } from './support/cpu-profile';
import { runHttpLoad, type HttpCall } from './support/http-load';
import { environment, formatTable, writeResult } from './support/report';
import { startBenchDatabase } from './support/services';
import { median, round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'heartbeats';
const projectRoot = fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, '');

/** The goal of issue 29: steady heartbeats/s as a share of /healthz req/s on the same process. */
const GOAL_RATIO = 0.8;
const POOL = 'bench-hb';
/** Identities inserted per statement (setup, not measured). */
const SEED_BATCH = 2_000;

const usage = [
  '  --agents N            node identities, inserted directly (default 20000): more than the',
  '                        cold window reaches, so that each of its heartbeats is a first one',
  '  --cold-seconds K      measured window of first heartbeats (default 4)',
  '  --seconds S           measured steady heartbeat window (default 20: it holds a 15 s flush)',
  '  --baseline-seconds B  measured GET /healthz window (default 8)',
  '  --warmup W            seconds of load before each window, not counted (default 2)',
  '  --concurrency C       requests in flight (default 64)',
  "  --flush-ms F          the API's heartbeat flush interval (default 15000, production's)",
  "  --api-connections P   the API's Postgres pool size (default 10, as createDb in production)",
  '  --rounds R            then R pairs of short windows, /healthz and steady beats in turn',
  '                        (default 5): the goal is judged on the median of their ratios',
  '  --round-seconds T     measured seconds of each window of a pair (default 3)',
  '  --profile             V8 CPU profile of the API process in each window, summarized; the',
  '                        .cpuprofile files are kept in a temporary directory (printed)',
].join('\n');

interface Options {
  agents: number;
  coldSeconds: number;
  seconds: number;
  baselineSeconds: number;
  warmup: number;
  concurrency: number;
  flushMs: number;
  apiConnections: number;
  rounds: number;
  roundSeconds: number;
  profile: boolean;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    agents: { type: 'string' },
    'cold-seconds': { type: 'string' },
    seconds: { type: 'string' },
    'baseline-seconds': { type: 'string' },
    warmup: { type: 'string' },
    concurrency: { type: 'string' },
    'flush-ms': { type: 'string' },
    'api-connections': { type: 'string' },
    rounds: { type: 'string' },
    'round-seconds': { type: 'string' },
    profile: { type: 'boolean' },
  });
  return {
    agents: intOption('agents', values.agents, 20_000, 1, 100_000),
    coldSeconds: intOption('cold-seconds', values['cold-seconds'], 4, 1, 600),
    seconds: intOption('seconds', values.seconds, 20, 1, 600),
    baselineSeconds: intOption('baseline-seconds', values['baseline-seconds'], 8, 1, 600),
    warmup: intOption('warmup', values.warmup, 2, 0, 60),
    concurrency: intOption('concurrency', values.concurrency, 64, 1, 1024),
    flushMs: intOption('flush-ms', values['flush-ms'], 15_000, 100, 600_000),
    apiConnections: intOption('api-connections', values['api-connections'], 10, 1, 100),
    rounds: intOption('rounds', values.rounds, 5, 1, 100),
    roundSeconds: intOption('round-seconds', values['round-seconds'], 3, 1, 60),
    profile: values.profile ?? false,
  };
}

export default defineBenchmark({
  summary:
    'heartbeats/s one API process absorbs, first beats and steady state (flush every 15 s), against GET /healthz',
  usage,
  // About a minute and a half: 20,000 identities seeded, then 5 + 4 + 16 s of windows (the last
  // holds a flush), then 5 pairs of 2 s windows.
  quick: [
    '--baseline-seconds',
    '5',
    '--cold-seconds',
    '4',
    '--seconds',
    '16',
    '--warmup',
    '1',
    '--round-seconds',
    '2',
  ],
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
  log(`API process ${api.pid} listening on :${api.port}`);
  // ── the identities: adopted, connected, alive, each with a credential of its own ───────────
  const seedStarted = performance.now();
  const agents: { nodeId: string; credential: string }[] = [];
  for (let done = 0; done < N; done += SEED_BATCH) {
    const batch = Array.from({ length: Math.min(SEED_BATCH, N - done) }, () => ({
      nodeId: newId('node'),
      credential: newSecret('ddn'),
    }));
    await setup.db.insert(nodes).values(
      batch.map(({ nodeId }, j) => ({
        id: nodeId,
        poolId: POOL,
        tenantId: 'bench',
        siteId: 'fra1',
        hostname: `bench-hb-${String(done + j + 1).padStart(6, '0')}`,
        provisionState: 'adopted' as const,
        connectivity: 'connected' as const,
        liveness: 'alive' as const,
        lastSeenAt: new Date(),
      })),
    );
    await setup.db.insert(nodeCredentials).values(
      batch.map(({ nodeId, credential }) => ({
        id: newId('cred'),
        nodeId,
        secretHash: hashSecret(credential),
        identityGeneration: 1,
        expiresAt: new Date(Date.now() + 86_400_000),
      })),
    );
    agents.push(...batch);
  }
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`${N} identities inserted in ${seedSeconds.toFixed(1)} s`);

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

  // ── heartbeats: first beats of each identity, then the ones reached again and again ────────
  const lastAckedSentAt = new Array<number>(N).fill(0);
  const lastSentAt = new Array<number>(N).fill(0);
  // As a real agent sends it: its run's session id, the same on every beat.
  const bodies = agents.map((_, i) =>
    JSON.stringify({ sessionId: `bench-run-${String(i).padStart(8, '0')}` }),
  );
  const beat = (i: number): HttpCall => {
    const sentAt = Date.now();
    lastSentAt[i] = sentAt;
    return {
      method: 'POST',
      path: '/v1/agent/heartbeat',
      body: bodies[i]!,
      headers: { authorization: `Bearer ${agents[i]!.credential}` },
      done: (ok) => {
        if (ok && sentAt > lastAckedSentAt[i]!) lastAckedSentAt[i] = sentAt;
      },
    };
  };
  let cursor = 0;
  const cold = await runPhase({
    name: 'cold',
    api,
    postmaster,
    profileDir,
    concurrency: C,
    warmupMs: 0,
    seconds: options.coldSeconds,
    next: () => beat(cursor++ % N),
  });
  // Beats past N were not first beats: the cold figure holds only if there were none.
  const reached = Math.min(cursor, N);
  const coldRepeats = Math.max(0, cursor - N);
  log(
    `cold: ${cold.requestsPerSecond} req/s, p50 ${cold.latency.p50} ms, p99 ${cold.latency.p99} ms, ` +
      `${cold.failed} failed; ${reached} identities reached` +
      (coldRepeats > 0 ? `, ${coldRepeats} beats were repeats: raise --agents` : ''),
  );
  const gaps: number[] = [];
  let steadyCursor = 0;
  const heartbeats = await runPhase({
    name: 'heartbeat',
    api,
    postmaster,
    profileDir,
    concurrency: C,
    warmupMs: options.warmup * 1000,
    seconds: options.seconds,
    next(): HttpCall {
      const i = steadyCursor++ % reached;
      if (gaps.length < 100_000) gaps.push(Date.now() - lastSentAt[i]!);
      return beat(i);
    },
  });
  log(
    `steady: ${heartbeats.requestsPerSecond} req/s, p50 ${heartbeats.latency.p50} ms, ` +
      `p99 ${heartbeats.latency.p99} ms, ${heartbeats.failed} failed`,
  );

  // ── pairs of short windows, /healthz then steady beats, for a ratio less exposed to drift ──
  const rounds: Round[] = [];
  for (let r = 0; r < options.rounds; r++) {
    const pair = { concurrency: C, warmupMs: options.warmup * 1000, seconds: options.roundSeconds };
    const hz = await runPhase({
      ...pair,
      name: `round-${r}-healthz`,
      api,
      postmaster,
      profileDir: null,
      next: () => ({ method: 'GET', path: '/healthz' }),
    });
    const hb = await runPhase({
      ...pair,
      name: `round-${r}-heartbeat`,
      api,
      postmaster,
      profileDir: null,
      next: () => beat(steadyCursor++ % reached),
    });
    rounds.push(roundOf(hz, hb));
    log(`round ${r + 1}/${options.rounds}: ${JSON.stringify(rounds[r])}`);
  }

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

  const result = report({
    options,
    services,
    loadBefore,
    seedSeconds,
    healthz,
    cold: { ...cold, reached, repeats: coldRepeats },
    heartbeats,
    flushes: { all: allFlushes, inWindow, final: finalFlush, finalRoundTripMs: finalFlushMs },
    proof,
    medianGapMs: median(gaps),
    rounds,
    postgresVisible: postmaster !== null,
    profileDir,
  });
  const path = writeResult(NAME, result);
  console.log(`\nwrote ${path}`);
  if (profileDir) console.log(`CPU profiles (open in Chrome DevTools or VS Code): ${profileDir}`);
  const sessionsKept = proof.sessions === 0 && proof.disconnected === 0;
  const roundsFailed = rounds.reduce((sum, r) => sum + r.failed, 0);
  return heartbeats.failed === 0 &&
    cold.failed === 0 &&
    roundsFailed === 0 &&
    proof.missing === 0 &&
    sessionsKept
    ? 0
    : 1;
}

/** One pair of short windows: /healthz, then steady heartbeats right after it. */
interface Round {
  healthzPerSecond: number;
  heartbeatsPerSecond: number;
  /** heartbeats/s ÷ /healthz req/s. */
  ratio: number;
  /** API CPU ms per request of each (null: the API's CPU not readable here). */
  healthzApiMs: number | null;
  heartbeatApiMs: number | null;
  /** The ratio by CPU per request: /healthz ms ÷ heartbeat ms. */
  cpuRatio: number | null;
  failed: number;
}

function roundOf(healthz: Phase, heartbeats: Phase): Round {
  const ms = (p: Phase) => (p.cpu.cores.api ? (p.cpu.cores.api * 1000) / p.requestsPerSecond : null);
  const [hz, hb] = [ms(healthz), ms(heartbeats)];
  return {
    healthzPerSecond: healthz.requestsPerSecond,
    heartbeatsPerSecond: heartbeats.requestsPerSecond,
    ratio: round(heartbeats.requestsPerSecond / healthz.requestsPerSecond, 3),
    healthzApiMs: hz === null ? null : round(hz, 4),
    heartbeatApiMs: hb === null ? null : round(hb, 4),
    cpuRatio: hz && hb ? round(hz / hb, 3) : null,
    failed: healthz.failed + heartbeats.failed,
  };
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
  /** node.connected events: none, as every identity was connected and no session timed out. */
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
  seedSeconds: number;
  healthz: Phase;
  cold: Phase & { reached: number; repeats: number };
  heartbeats: Phase;
  flushes: { all: ApiFlush[]; inWindow: ApiFlush[]; final: ApiFlush | null; finalRoundTripMs: number };
  proof: Proof;
  medianGapMs: number;
  rounds: Round[];
  postgresVisible: boolean;
  profileDir: string | null;
}) {
  const { options, healthz, cold, heartbeats, proof, flushes } = input;
  const environ = environment();
  const { rounds } = input;
  const ratio = round(heartbeats.requestsPerSecond / healthz.requestsPerSecond, 3);
  const coldRatio = round(cold.requestsPerSecond / healthz.requestsPerSecond, 3);
  const medianOf = (pick: (r: Round) => number | null) => {
    const values = rounds.map(pick).filter((v): v is number => v !== null);
    return values.length > 0 ? round(median(values), 4) : null;
  };
  // The goal's figure: the median of the pairs' ratios (and, to show, the median of each rate).
  const roundsSummary = {
    ratio: medianOf((r) => r.ratio)!,
    healthzPerSecond: medianOf((r) => r.healthzPerSecond)!,
    heartbeatsPerSecond: medianOf((r) => r.heartbeatsPerSecond)!,
    cpuRatio: medianOf((r) => r.cpuRatio),
    healthzApiMs: medianOf((r) => r.healthzApiMs),
    heartbeatApiMs: medianOf((r) => r.heartbeatApiMs),
  };
  const goals = {
    ratio: roundsSummary.ratio >= GOAL_RATIO,
    noErrors: heartbeats.failed === 0 && cold.failed === 0,
    coldFirstBeatsOnly: cold.repeats === 0,
    nothingLost: proof.missing === 0 && proof.flushed === proof.agents,
    flushInWindow: flushes.inWindow.length > 0,
  };
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const cores = (v: number | null | undefined) => (v === null || v === undefined ? '-' : v.toFixed(2));
  const perRequest = (phase: Phase, v: number | null | undefined) =>
    v === null || v === undefined ? '-' : round((v * 1000) / phase.requestsPerSecond, 3);
  const phases: [string, Phase][] = [
    ['GET /healthz', healthz],
    ['heartbeat, cold (first of each)', cold],
    ['heartbeat, steady (cached)', heartbeats],
  ];
  const figures: Figure[] = [
    {
      figure: `heartbeats/s ÷ GET /healthz req/s, steady state (credentials cached), median of ${rounds.length} paired rounds`,
      goal: `≥ ${GOAL_RATIO}×`,
      value: `${roundsSummary.heartbeatsPerSecond} req/s`,
      baseline: `${roundsSummary.healthzPerSecond} req/s /healthz`,
      ratio: roundsSummary.ratio,
      met: goals.ratio,
    },
    {
      figure: "heartbeats/s ÷ GET /healthz req/s, cold (each identity's first beat: lookup + session check)",
      goal: '— (reported)',
      value: `${cold.requestsPerSecond} req/s`,
      baseline: `${healthz.requestsPerSecond} req/s /healthz`,
      ratio: coldRatio,
      met: goals.coldFirstBeatsOnly,
    },
  ];
  const durations = summarize(flushes.inWindow.map((f) => f.durationMs));
  const lines = [
    '',
    `${NAME}: ${options.agents} identities, ${options.concurrency} in flight, cold window ` +
      `${options.coldSeconds} s, steady window ${options.seconds} s, /healthz window ` +
      `${options.baselineSeconds} s (+${options.warmup} s warm-up but cold); ` +
      `flush every ${options.flushMs} ms; API pool ${options.apiConnections}`,
    `postgres ${input.services.postgres.source}; ${environ.cpus} CPUs, load ${input.loadBefore.join(' ')} ` +
      `before, ${environ.loadavg.join(' ')} after; identities inserted in ${round(input.seedSeconds, 1)} s`,
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
        [
          `heartbeats/s ÷ /healthz req/s, median of ${rounds.length} pairs`,
          `${roundsSummary.ratio}×`,
          `≥ ${GOAL_RATIO}×`,
          yes(goals.ratio),
        ],
        ['heartbeats/s ÷ /healthz req/s, the long windows above', `${ratio}×`, '', ''],
        ['heartbeats/s ÷ /healthz req/s, cold', `${coldRatio}×`, '', ''],
        ['cold beats that were not first beats', cold.repeats, '0', yes(goals.coldFirstBeatsOnly)],
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
    `sessions: ${proof.sessions} node.connected for ${proof.agents} connected identities (none: no session timed out), ` +
      `${proof.disconnected} node.disconnected; telemetry_current matches last_seen_at for ` +
      `${proof.telemetryMatches}/${proof.agents}; ${proof.seenSinceWindowStart} agents seen since the window opened`,
    `steady: each identity beat again after a median ${input.medianGapMs} ms (production: 10 s; the ` +
      `cache keeps a credential until a change to its node, so the gap does not matter)`,
  ];
  lines.push(
    '',
    formatTable(
      [
        'pair (healthz, then heartbeats)',
        '/healthz req/s',
        'heartbeats/s',
        'ratio',
        'API ms /healthz',
        'API ms beat',
        'ratio by CPU',
      ],
      [
        ...rounds.map((r, i) => [
          i + 1,
          r.healthzPerSecond,
          r.heartbeatsPerSecond,
          r.ratio,
          r.healthzApiMs ?? '-',
          r.heartbeatApiMs ?? '-',
          r.cpuRatio ?? '-',
        ]),
        [
          'median',
          roundsSummary.healthzPerSecond,
          roundsSummary.heartbeatsPerSecond,
          roundsSummary.ratio,
          roundsSummary.healthzApiMs ?? '-',
          roundsSummary.heartbeatApiMs ?? '-',
          roundsSummary.cpuRatio ?? '-',
        ],
      ],
    ),
  );
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
    goals: { ratio: GOAL_RATIO, errors: 0 },
    figures,
    environment: { ...environ, loadavgBefore: input.loadBefore },
    services: input.services,
    postgresCpuVisible: input.postgresVisible,
    seedSeconds: round(input.seedSeconds, 2),
    healthz,
    cold,
    heartbeats,
    ratio,
    coldRatio,
    met: goals,
    flushes: { ...flushes, inWindowDurationMs: durations },
    proof,
    medianGapMs: input.medianGapMs,
    rounds: { pairs: rounds, median: roundsSummary },
    profileDir: input.profileDir,
  };
}
