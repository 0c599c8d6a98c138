/**
 * mutations: node controls through the real HTTP API against the same transaction in `pgbench`
 * (issue 29), measured in one run on this machine. Goals: the API at ≥ 0.5× pgbench's rate at
 * concurrency 32, and the API's p99 at most 2× pgbench's p99.
 *
 * One pool of N nodes (default 1,000) in a throwaway database. The API runs in a child process
 * (api/server.ts `listen`, its own Postgres pool and Temporal client), called with an operator API key;
 * this process is the load generator: C lanes (default 32), each with a keep-alive connection,
 * sending its next request as soon as the last one answered. Two workloads, each measured for a
 * fixed window after a warm-up:
 *
 *   cordon  cordon or uncordon (whichever changes it) a random node of the lane's own
 *   label   set { bench: <fresh value> } on a random node of the lane's own
 *
 * Lane c owns nodes c, c + C, c + 2C, ... (the last N mod C nodes are left out) so no two
 * requests race for a node: every request is a change (a version bump and an event, checked
 * against the events table afterwards) and a 409 or lock wait would be a bug. pgbench runs the
 * very statements the API sends for each workload, with C clients over the same nodes partitioned
 * the same way, right after the API's run of that workload: before the runs, one cordon, one
 * uncordon and one label go through the same app and routes in this process on a pool whose
 * driver reports every statement it sends (postgres.js' `debug` hook: text and parameters), and
 * bench/support/pgbench-replay.ts turns those into the script (the node's id and version become
 * pgbench variables; every other parameter is the value the request sent). pgbench sends them as
 * the driver does: unnamed statements (`-M extended`).
 * Both sides are read the same way: what completed inside the window, per-transaction latencies
 * from pgbench's `--log`.
 *
 * Also reported: the SQL statements (round trips) the API sends per request, counted through the
 * same routes in this process with a counting pool; the CPU split between the load generator, the
 * API, pgbench, Postgres and the rest of the machine (the load generator shares the machine with
 * the API, as pgbench does with Postgres); with --profile, the API's V8 CPU profile of each
 * window, summarized by package and by function.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createApp } from '../api/app';
import { createAppDeps } from '../api/deps';
import { generateCa } from '../ca';
import { createDb } from '../db/client';
import * as schema from '../db/schema';
import { apiKeys, nodes, pools } from '../db/schema';
import { newId } from '../domain/ids';
import { hashSecret, newSecret } from '../domain/secrets';
import { startApiProcess, type ApiProcess } from './support/api-process';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { cpuBetween, cpuMark, parentPid, type CpuMark, type CpuSplit } from './support/cpu';
import { summarizeProfileFile, type ProfileSummary } from './support/cpu-profile';
import { runHttpLoad, type HttpCall } from './support/http-load';
import { pgbenchCommand, runPgbench, type PgbenchResult } from './support/pgbench';
import {
  replayScript,
  type CapturedCall,
  type ReplayScript,
  type SentStatement,
} from './support/pgbench-replay';
import { environment, formatTable, writeResult } from './support/report';
import { startServices, type BenchServices } from './support/services';
import { round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'mutations';
const projectRoot = fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, '');

/** The goals of issue 29: throughput as a share of pgbench's, p99 as a multiple of pgbench's. */
const GOAL_RATIO = 0.5;
const GOAL_P99_RATIO = 2;

const usage = [
  '  --seconds S          measured window of each run (default 15)',
  '  --warmup W           seconds of load before each window, not counted (default 2)',
  '  --concurrency C      HTTP clients, and pgbench clients (default 32)',
  '  --nodes N            nodes in the pool (default 1000, at least C)',
  "  --api-connections P  the API's Postgres pool size (default 10, as createDb in production)",
  '  --seed X             pgbench --random-seed (default: random, recorded)',
  '  --profile            V8 CPU profile of the API process in each window, summarized; the',
  '                       .cpuprofile files are kept in a temporary directory (printed)',
].join('\n');

interface Options {
  seconds: number;
  warmup: number;
  concurrency: number;
  nodes: number;
  apiConnections: number;
  seed: number;
  profile: boolean;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    concurrency: { type: 'string' },
    nodes: { type: 'string' },
    'api-connections': { type: 'string' },
    seed: { type: 'string' },
    profile: { type: 'boolean' },
  });
  const concurrency = intOption('concurrency', values.concurrency, 32, 1, 256);
  return {
    seconds: intOption('seconds', values.seconds, 15, 1, 600),
    warmup: intOption('warmup', values.warmup, 2, 0, 60),
    concurrency,
    nodes: intOption('nodes', values.nodes, 1000, concurrency, 100_000),
    apiConnections: intOption('api-connections', values['api-connections'], 10, 1, 100),
    seed: intOption('seed', values.seed, randomInt(1, 2 ** 31 - 1), 0, 2 ** 31 - 1),
    profile: values.profile ?? false,
  };
}

// Not a literal in the call: `quick` is read by bench/run.ts's quick mode.
const benchmark = {
  summary: 'cordon/uncordon and label through the API at concurrency C, against the same SQL in pgbench',
  usage,
  /** About a minute: two workloads, each a 5 s window through the API and in pgbench. */
  quick: ['--seconds', '5', '--warmup', '1'],
  run: measured(parseOptions, measure),
};
export default defineBenchmark(benchmark);

/** One workload: how a lane picks its next request, and the transaction pgbench runs for it. */
interface Workload {
  name: 'cordon' | 'label';
  /** Event types a request or transaction of this workload appends. */
  eventTypes: string[];
  next(lane: number): HttpCall;
  /** What pgbench runs for it: the statements one such request sent (bench/support/pgbench-replay.ts). */
  pgbench: ReplayScript;
}

interface ApiRun {
  requestsPerSecond: number;
  latency: Summary;
  latencyStddevMs: number;
  sent: number;
  succeeded: number;
  failed: number;
  failedInWindow: number;
  failures: string[];
  statusCounts: Record<string, number>;
  eventsWritten: number;
  cpu: CpuSplit;
  /** Share of the window the API's event loop was busy. */
  apiEventLoopBusy: number;
  profile?: { path: string; summary: ProfileSummary };
}

interface PgbenchRun {
  transactionsPerSecond: number;
  latency: Summary;
  /** From the per-transaction log (pgbench prints a stddev only with -P, -R or -L). */
  latencyStddevMs: number;
  transactions: number;
  eventsWritten: number;
  reported: PgbenchResult['reported'];
  statements: PgbenchResult['statements'];
  command: string;
  script: string;
  /** Statements of a transaction: one count per captured request it replays. */
  statementsPerTransaction: string;
  cpu: CpuSplit;
}

interface StatementCount {
  requests: number;
  perRequest: number;
  statements: { sql: string; perRequest: number }[];
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const C = options.concurrency;
  const N = options.nodes;
  const perLane = Math.floor(N / C);
  const loadBefore = loadavg().map((x) => round(x));
  log(
    `${NAME}: ${N} nodes, ${C} clients, ${options.seconds} s (+${options.warmup} s warm-up) per run, ` +
      `API pool ${options.apiConnections}`,
  );

  // ── services, the database, the nodes ──────────────────────────────────────────────────────
  const services = await startServices(teardown, log);
  log(
    `postgres: ${services.postgres.source} (${services.postgres.database}); ` +
      `temporal: ${services.temporal.source} at ${services.temporal.address}`,
  );
  const setup = createDb(services.databaseUrl, { max: 2 });
  teardown.add('close the setup pool', () => setup.close());
  const sql = setup.sql;
  await setup.db.insert(pools).values({ id: 'bench', kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
  const nodeIds = Array.from({ length: N }, () => newId('node'));
  for (let i = 0; i < N; i += 2000) {
    await setup.db.insert(nodes).values(
      nodeIds.slice(i, i + 2000).map((id, j) => ({
        id,
        poolId: 'bench',
        tenantId: 'bench',
        siteId: 'fra1',
        hostname: `bench-${String(i + j).padStart(5, '0')}`,
        provisionState: 'adopted' as const,
        connectivity: 'connected' as const,
      })),
    );
  }
  // pgbench's way to the same ids: node n (1-based) of the list.
  await sql`create table bench_ids (n integer primary key, id text not null)`;
  for (let i = 0; i < N; i += 10_000) {
    await sql`insert into bench_ids ${sql(nodeIds.slice(i, i + 10_000).map((id, j) => ({ n: i + j + 1, id })))}`;
  }
  await sql`analyze`;
  log(`${N} nodes seeded`);
  const postmaster = await findPostmaster(sql);
  if (postmaster === null) log('postgres: its processes are not visible here; no CPU figure for it');

  const suffix = `${process.pid}-${randomBytes(3).toString('hex')}`;
  // The lanes call with an operator API key, as production's clients do (resolved from api_keys,
  // then kept: api/api-keys.ts), not the bootstrap key, which is configured but never sent.
  const operatorKey = newSecret('ddk');
  await setup.db
    .insert(apiKeys)
    .values({ id: newId('key'), name: 'bench-operator', secretHash: hashSecret(operatorKey) });
  const bootstrapKey = `bench-bootstrap-${randomBytes(16).toString('hex')}`;
  const bootstrapKeyHash = hashSecret(bootstrapKey);
  const taskQueue = `bench-mutations-${suffix}`;

  // ── statements per request, through the same routes with a counting pool ────────────────────
  const connection = await Connection.connect({ address: services.temporal.address });
  teardown.add('close the Temporal connection', () => connection.close());
  const temporal = new Client({ connection, namespace: 'default' });
  const captured = await captureStatements({
    url: services.databaseUrl,
    temporal,
    taskQueue,
    bootstrapKeyHash,
    operatorKey,
    nodeId: nodeIds[0]!,
  });
  const statementCounts = captured.counts;
  log(
    `statements per request: ${Object.entries(statementCounts)
      .map(([w, c]) => `${w} ${c.perRequest}`)
      .join(', ')}`,
  );

  // ── what each workload is ──────────────────────────────────────────────────────────────────
  const cordoned = new Array<boolean>(N).fill(false);
  const pick = (lane: number) => lane + C * Math.floor(Math.random() * perLane);
  let labelCounter = 0;
  // pgbench's client c takes the nodes of lane c, as the API's lane c does.
  const pickN = [`\\set n 1 + :client_id + ${C} * random(0, ${perLane - 1})`];
  const workloads: Workload[] = [
    {
      name: 'cordon',
      eventTypes: ['node.cordoned', 'node.uncordoned'],
      next(lane) {
        const i = pick(lane);
        const on = cordoned[i]!;
        return {
          method: 'POST',
          path: `/v1/nodes/${nodeIds[i]}/${on ? 'uncordon' : 'cordon'}`,
          body: '{}',
          done: (ok) => {
            if (ok) cordoned[i] = !on;
          },
        };
      },
      // A cordon's statements on an uncordoned node, an uncordon's on a cordoned one.
      pgbench: replayScript({
        calls: [captured.calls.cordon, captured.calls.uncordon],
        branch: 'cordoned',
        pick: pickN,
        table: 'bench_ids',
      }),
    },
    {
      name: 'label',
      eventTypes: ['node.labeled'],
      next(lane) {
        const i = pick(lane);
        return {
          method: 'POST',
          path: `/v1/nodes/${nodeIds[i]}/label`,
          body: JSON.stringify({ set: { bench: `v${lane}-${labelCounter++}` } }),
        };
      },
      // The captured label's value each time: the upsert writes the row all the same.
      pgbench: replayScript({ calls: [captured.calls.label], pick: pickN, table: 'bench_ids' }),
    },
  ];

  // ── the API, in a process of its own ───────────────────────────────────────────────────────
  const api = await startApiProcess(
    {
      databaseUrl: services.databaseUrl,
      temporalAddress: services.temporal.address,
      taskQueue,
      bootstrapKeyHash,
      connections: options.apiConnections,
    },
    teardown,
  );
  log(`API process ${api.pid} listening on :${api.port}`);
  const scratch = mkdtempSync(join(tmpdir(), 'drydock-bench-mutations-'));
  teardown.add('remove the scratch directory', () => rmSync(scratch, { recursive: true, force: true }));
  const profileDir = options.profile ? join(tmpdir(), `drydock-bench-mutations-profiles-${suffix}`) : null;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  const countEvents = async (types: string[]) => {
    const [row] = await sql<
      { n: string }[]
    >`select count(*)::text as n from events where type = any(${types})`;
    return Number(row!.n);
  };
  const checkpoint = () => sql`checkpoint`.catch(() => {});

  // ── the runs: each workload through the API, then in pgbench ────────────────────────────────
  const results: Record<string, { api: ApiRun; pgbench: PgbenchRun }> = {};
  for (const workload of workloads) {
    await checkpoint();
    const apiRun = await runApi({ workload, api, options, operatorKey, postmaster, profileDir, countEvents });
    log(
      `${workload.name} API: ${apiRun.requestsPerSecond} req/s, p50 ${apiRun.latency.p50} ms, ` +
        `p99 ${apiRun.latency.p99} ms, ${apiRun.failed} failed`,
    );
    await checkpoint();
    const pgRun = await runPgbenchPhase({
      workload,
      options,
      url: services.databaseUrl,
      scratch,
      postmaster,
      countEvents,
    });
    log(
      `${workload.name} pgbench: ${pgRun.transactionsPerSecond} tps, p50 ${pgRun.latency.p50} ms, ` +
        `p99 ${pgRun.latency.p99} ms`,
    );
    results[workload.name] = { api: apiRun, pgbench: pgRun };
  }

  const result = report({
    options,
    services,
    loadBefore,
    statementCounts,
    results,
    postgresVisible: postmaster !== null,
    profileDir,
  });
  const path = writeResult(NAME, result);
  console.log(`\nwrote ${path}`);
  if (profileDir) console.log(`CPU profiles (open in Chrome DevTools or VS Code): ${profileDir}`);
  const consistent = Object.values(results).every(
    (r) =>
      r.api.failed === 0 &&
      r.api.eventsWritten === r.api.succeeded &&
      r.pgbench.eventsWritten === r.pgbench.transactions,
  );
  return consistent ? 0 : 1;
}

/** The postmaster of the server behind `sql`, when its processes are visible from here. */
async function findPostmaster(sql: postgres.Sql): Promise<number | null> {
  const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const postmaster = parentPid(row!.pid);
  if (postmaster === null) return null;
  try {
    return readFileSync(`/proc/${postmaster}/comm`, 'utf8').trim().startsWith('postgres') ? postmaster : null;
  } catch {
    return null;
  }
}

async function runApi(input: {
  workload: Workload;
  api: ApiProcess;
  options: Options;
  operatorKey: string;
  postmaster: number | null;
  profileDir: string | null;
  countEvents: (types: string[]) => Promise<number>;
}): Promise<ApiRun> {
  const { workload, api, options, postmaster, profileDir } = input;
  const eventsBefore = await input.countEvents(workload.eventTypes);
  let start: CpuMark | undefined;
  let end: CpuMark | undefined;
  let loopStart: Promise<ReturnType<typeof performance.eventLoopUtilization>> | undefined;
  let loopEnd: Promise<ReturnType<typeof performance.eventLoopUtilization>> | undefined;
  const profilePath = profileDir ? join(profileDir, `api-${workload.name}.cpuprofile`) : null;
  const load = await runHttpLoad({
    port: api.port,
    headers: { authorization: `Bearer ${input.operatorKey}` },
    concurrency: options.concurrency,
    warmupMs: options.warmup * 1000,
    durationMs: options.seconds * 1000,
    next: workload.next,
    async onWindow(edge) {
      if (edge === 'start') {
        start = cpuMark({ api: api.pid }, postmaster);
        loopStart = api.eventLoop();
        if (profilePath) await api.profileStart();
      } else {
        end = cpuMark({ api: api.pid }, postmaster);
        loopEnd = api.eventLoop();
        if (profilePath) await api.profileStop(profilePath);
      }
    },
  });
  const [a, b] = await Promise.all([loopStart!, loopEnd!]);
  const eventsWritten = (await input.countEvents(workload.eventTypes)) - eventsBefore;
  return {
    requestsPerSecond: round(load.latenciesMs.length / options.seconds, 1),
    latency: summarize(load.latenciesMs),
    latencyStddevMs: stddev(load.latenciesMs),
    sent: load.sent,
    succeeded: load.succeeded,
    failed: load.failed,
    failedInWindow: load.failedInWindow,
    failures: load.failures,
    statusCounts: load.statusCounts,
    eventsWritten,
    cpu: cpuBetween(start!, end!, 'loadGenerator'),
    apiEventLoopBusy: round(performance.eventLoopUtilization(b, a).utilization, 3),
    ...(profilePath
      ? { profile: { path: profilePath, summary: summarizeProfileFile(profilePath, projectRoot) } }
      : {}),
  };
}

async function runPgbenchPhase(input: {
  workload: Workload;
  options: Options;
  url: string;
  scratch: string;
  postmaster: number | null;
  countEvents: (types: string[]) => Promise<number>;
}): Promise<PgbenchRun> {
  const { workload, options, postmaster } = input;
  const eventsBefore = await input.countEvents(workload.eventTypes);
  let pid: number | undefined;
  let start: CpuMark | undefined;
  let end: CpuMark | undefined;
  const spawnedAt = Date.now();
  const windowStart = spawnedAt + options.warmup * 1000;
  const windowEnd = windowStart + options.seconds * 1000;
  const timers = [
    setTimeout(() => (start = cpuMark({ pgbench: pid }, postmaster)), windowStart - spawnedAt),
    setTimeout(() => (end = cpuMark({ pgbench: pid }, postmaster)), windowEnd - spawnedAt),
  ];
  let run: PgbenchResult;
  try {
    run = await runPgbench({
      url: input.url,
      name: workload.name,
      script: workload.pgbench.script,
      dir: input.scratch,
      clients: options.concurrency,
      threads: Math.min(2, options.concurrency),
      // A second past the window, so pgbench still runs at its end (its clock starts after connecting).
      seconds: options.warmup + options.seconds + 1,
      seed: options.seed,
      // Unnamed statements, parsed each time, as the API's driver sends them (drizzle queries that
      // are not `.prepare()`d), with the values the request sent.
      mode: 'extended',
      variables: workload.pgbench.variables,
      onStart: (p) => (pid = p),
    });
  } finally {
    for (const t of timers) clearTimeout(t);
  }
  if (!start || !end) throw new Error('pgbench finished before its measured window closed');
  const inWindow = run.transactions.filter((t) => t.endMs >= windowStart && t.endMs <= windowEnd);
  const latencies = inWindow.map((t) => t.latencyMs);
  const eventsWritten = (await input.countEvents(workload.eventTypes)) - eventsBefore;
  return {
    transactionsPerSecond: round(inWindow.length / options.seconds, 1),
    latency: summarize(latencies),
    latencyStddevMs: stddev(latencies),
    transactions: run.transactions.length,
    eventsWritten,
    reported: run.reported,
    statements: run.statements,
    command: run.command,
    script: workload.pgbench.script,
    statementsPerTransaction: workload.pgbench.statementsPerCall.join(' or '),
    cpu: cpuBetween(start, end, 'benchProcess'),
  };
}

/**
 * Runs each workload's requests through the same app and routes in this process, on a pool of one
 * connection whose every statement is seen as the driver sends it (postgres.js' `debug` hook):
 * counted, BEGIN and COMMIT included, so the count is the round trips to Postgres one request
 * costs; and one cordon, one uncordon and one label kept whole, text and parameters, for pgbench
 * to replay. Node 0 ends as it began (uncordoned).
 */
async function captureStatements(input: {
  url: string;
  temporal: Client;
  taskQueue: string;
  bootstrapKeyHash: string;
  operatorKey: string;
  nodeId: string;
}): Promise<{
  counts: Record<Workload['name'], StatementCount>;
  calls: Record<'cordon' | 'uncordon' | 'label', CapturedCall>;
}> {
  const seen: SentStatement[] = [];
  const sql = postgres(input.url, {
    max: 1,
    onnotice: () => {},
    debug: (_conn, query, params) => void seen.push({ sql: query, params: params as unknown[] }),
  });
  try {
    const db = drizzle(sql, { schema });
    // The services are not started: their background statements (a heartbeat flush) would count.
    const ca = generateCa();
    const { deps } = createAppDeps({
      db,
      sql,
      clusterId: 'bench',
      caPrivateKey: ca.privateKey,
      caPublicKeyPem: ca.publicKeyPem,
      bootstrapKeyHash: input.bootstrapKeyHash,
    });
    const app = createApp(deps);
    const post = async (path: string, body: unknown) => {
      const response = await app.request(path, {
        method: 'POST',
        headers: { authorization: `Bearer ${input.operatorKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`statement count: ${path}: ${response.status} ${text}`);
    };
    const node = `/v1/nodes/${input.nodeId}`;
    await post(`${node}/cordon`, {}); // the first statements of a connection describe themselves too
    await post(`${node}/uncordon`, {});
    const capture = async (path: string, body: unknown): Promise<CapturedCall> => {
      seen.length = 0;
      await post(`${node}/${path}`, body);
      return { nodeId: input.nodeId, statements: [...seen] };
    };
    const calls = {
      cordon: await capture('cordon', {}),
      uncordon: await capture('uncordon', {}),
      label: await capture('label', { set: { bench: 'captured' } }),
    };
    const count = async (requests: number, send: (i: number) => Promise<void>): Promise<StatementCount> => {
      seen.length = 0;
      for (let i = 0; i < requests; i++) await send(i);
      const byText = new Map<string, number>();
      for (const { sql: q } of seen) byText.set(shorten(q), (byText.get(shorten(q)) ?? 0) + 1);
      return {
        requests,
        perRequest: round(seen.length / requests),
        statements: [...byText].map(([text, n]) => ({ sql: text, perRequest: round(n / requests) })),
      };
    };
    return {
      counts: {
        cordon: await count(20, (i) => post(`${node}/${i % 2 === 0 ? 'cordon' : 'uncordon'}`, {})),
        label: await count(20, (i) => post(`${node}/label`, { set: { bench: `count-${i}` } })),
      },
      calls,
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function stddev(samples: number[]): number {
  if (samples.length < 2) return NaN;
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return round(Math.sqrt(samples.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (samples.length - 1)));
}

/** A statement's text, with its column lists elided: enough to tell which one it is. */
function shorten(query: string): string {
  return query
    .replace(/\s+/g, ' ')
    .replace(/\$\d+/g, '$n')
    .replace(/^select .*? from /i, 'select … from ')
    .replace(/ returning .*$/i, ' returning …')
    .replace(/ \(("[a-z_]+", )*"[a-z_]+"\) values \(.*?\)( on conflict)?/i, ' (…) values (…)$2')
    .replace(/ set .*? where /i, ' set … where ')
    .slice(0, 120);
}

function report(input: {
  options: Options;
  services: BenchServices;
  loadBefore: number[];
  statementCounts: Record<string, StatementCount>;
  results: Record<string, { api: ApiRun; pgbench: PgbenchRun }>;
  postgresVisible: boolean;
  profileDir: string | null;
}) {
  const { options, results, statementCounts } = input;
  const environ = environment();
  const workloads = Object.entries(results).map(([name, { api, pgbench }]) => {
    const ratio = round(api.requestsPerSecond / pgbench.transactionsPerSecond, 2);
    const p99Ratio = round(api.latency.p99 / pgbench.latency.p99, 2);
    return {
      name,
      api,
      pgbench,
      ratio,
      p99Ratio,
      goals: {
        throughput: ratio >= GOAL_RATIO,
        p99: p99Ratio <= GOAL_P99_RATIO,
        noErrors: api.failed === 0,
        eventsMatch: api.eventsWritten === api.succeeded,
      },
    };
  });
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const cores = (v: number | null | undefined) => (v === null || v === undefined ? '-' : v.toFixed(2));
  const lines = [
    '',
    `${NAME}: ${options.nodes} nodes, ${options.concurrency} clients, ${options.seconds} s windows ` +
      `(+${options.warmup} s warm-up); API pool ${options.apiConnections} connections; ` +
      `pgbench -M extended -c ${options.concurrency} -j ${Math.min(2, options.concurrency)} --random-seed=${options.seed}`,
    `postgres ${input.services.postgres.source}, temporal ${input.services.temporal.source}; ` +
      `${environ.cpus} CPUs, load ${input.loadBefore.join(' ')} before, ${environ.loadavg.join(' ')} after`,
    '',
    formatTable(
      [
        'workload',
        'API req/s',
        'pgbench tps',
        'ratio',
        'API p50',
        'API p99',
        'API max',
        'pgbench p50',
        'pgbench p99',
        'p99 ratio',
        'errors',
        `≥${GOAL_RATIO}×`,
        `p99≤${GOAL_P99_RATIO}×`,
      ],
      workloads.map((w) => [
        w.name,
        w.api.requestsPerSecond,
        w.pgbench.transactionsPerSecond,
        `${w.ratio}×`,
        w.api.latency.p50,
        w.api.latency.p99,
        w.api.latency.max,
        w.pgbench.latency.p50,
        w.pgbench.latency.p99,
        `${w.p99Ratio}×`,
        w.api.failed,
        yes(w.goals.throughput),
        yes(w.goals.p99),
      ]),
    ),
    '(latencies in ms; a request or transaction counts when it completes inside the window)',
    '',
    formatTable(
      ['cores used in the window', 'bench process', 'API', 'pgbench', 'postgres', 'machine', 'other'],
      workloads.flatMap((w) => [
        [
          `${w.name} API`,
          cores(w.api.cpu.cores.loadGenerator),
          cores(w.api.cpu.cores.api),
          '',
          cores(w.api.cpu.cores.postgres),
          cores(w.api.cpu.cores.machine),
          cores(w.api.cpu.cores.other),
        ],
        [
          `${w.name} pgbench`,
          cores(w.pgbench.cpu.cores.benchProcess),
          '',
          cores(w.pgbench.cpu.cores.pgbench),
          cores(w.pgbench.cpu.cores.postgres),
          cores(w.pgbench.cpu.cores.machine),
          cores(w.pgbench.cpu.cores.other),
        ],
      ]),
    ),
    `(the bench process is the load generator during the API runs; API event loop busy: ${workloads
      .map((w) => `${w.name} ${Math.round(w.api.apiEventLoopBusy * 100)}%`)
      .join(', ')}; "other" is the rest of the machine: Temporal, other people's work)`,
    '',
    formatTable(
      [
        'CPU ms per request / transaction',
        'client',
        'API',
        'API user',
        'API sys',
        'postgres',
        'API switches vol/invol',
      ],
      workloads.flatMap((w) => {
        const perApi = (cores: number | null | undefined) =>
          cores === null || cores === undefined ? '-' : round((cores * 1000) / w.api.requestsPerSecond, 3);
        const perPg = (cores: number | null | undefined) =>
          cores === null || cores === undefined
            ? '-'
            : round((cores * 1000) / w.pgbench.transactionsPerSecond, 3);
        const api = w.api.cpu.processes.api;
        const switches = (n: number | null | undefined) =>
          n === null || n === undefined ? '?' : round(n / w.api.requestsPerSecond, 1);
        return [
          [
            `${w.name} API`,
            perApi(w.api.cpu.cores.loadGenerator),
            perApi(w.api.cpu.cores.api),
            perApi(api?.userCores),
            perApi(api?.systemCores),
            perApi(w.api.cpu.cores.postgres),
            `${switches(api?.voluntarySwitchesPerSecond)} / ${switches(api?.involuntarySwitchesPerSecond)}`,
          ],
          [
            `${w.name} pgbench`,
            perPg(w.pgbench.cpu.cores.pgbench),
            '',
            '',
            '',
            perPg(w.pgbench.cpu.cores.postgres),
            '',
          ],
        ];
      }),
    ),
    '(client: the load generator for the API, pgbench itself for pgbench; switches: of the API main thread, per request)',
    '',
    formatTable(
      ['round trips to Postgres', 'API per request', 'pgbench per transaction'],
      workloads.map((w) => [
        w.name,
        statementCounts[w.name]?.perRequest ?? '-',
        w.pgbench.statementsPerTransaction,
      ]),
    ),
    ...workloads.flatMap((w) => [
      '',
      formatTable(
        [`${w.name}: API statements`, 'per request'],
        (statementCounts[w.name]?.statements ?? []).map((s) => [s.sql, s.perRequest]),
      ),
      '',
      formatTable(
        [`${w.name}: pgbench statements (-r)`, 'avg ms'],
        w.pgbench.statements.map((s) => [s.sql.length > 100 ? `${s.sql.slice(0, 99)}…` : s.sql, s.ms]),
      ),
    ]),
  ];
  for (const w of workloads) {
    const profile = w.api.profile?.summary;
    if (!profile) continue;
    lines.push(
      '',
      `${w.name}: API CPU profile (main thread), ${profile.busyMs} ms busy of ${profile.wallMs} ms: ` +
        `${round(profile.busyMs / Math.max(1, w.api.latency.count), 3)} ms per request`,
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
    figures: figuresOf(workloads, options.concurrency),
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    goals: { ratio: GOAL_RATIO, p99Ratio: GOAL_P99_RATIO },
    environment: {
      ...environ,
      loadavgBefore: input.loadBefore,
      pgbench: pgbenchCommand(),
      cpus: cpus().length,
    },
    services: input.services,
    postgresCpuVisible: input.postgresVisible,
    statementsPerRequest: statementCounts,
    workloads,
    profileDir: input.profileDir,
  };
}

/** The rows of docs/benchmarks.md: per workload its rate against pgbench's, its p99 against pgbench's. */
function figuresOf(
  workloads: { name: string; api: ApiRun; pgbench: PgbenchRun; ratio: number; p99Ratio: number }[],
  concurrency: number,
): Figure[] {
  const count = (n: number) => Math.round(n).toLocaleString('en-US');
  return workloads.flatMap((w) => [
    {
      figure: `${w.name} throughput, API vs pgbench (concurrency ${concurrency})`,
      goal: `≥ ${GOAL_RATIO}×`,
      value: `${count(w.api.requestsPerSecond)} req/s`,
      baseline: `${count(w.pgbench.transactionsPerSecond)} tps pgbench`,
      ratio: w.ratio,
      met: w.ratio >= GOAL_RATIO,
    },
    {
      // Against pgbench's p99 of the same statements at the same concurrency: the database's own
      // queueing, which no API in front of it can undercut.
      figure: `${w.name} API p99 vs pgbench p99 (concurrency ${concurrency})`,
      goal: `≤ ${GOAL_P99_RATIO}×`,
      value: `${w.api.latency.p99} ms`,
      baseline: `${w.pgbench.latency.p99} ms pgbench`,
      ratio: w.p99Ratio,
      met: w.p99Ratio <= GOAL_P99_RATIO,
    },
  ]);
}
