/**
 * preview: decommission preview latency for a node without history against one with 100,000
 * history rows (issue 5, item 7). The rule: "Preview cost grows with the node's live
 * dependencies, never with its history." Goal: B/A ≤ 1.3 at p50 and p99, and p99 ≤ 50 ms.
 *
 * One throwaway database. Every node (A, B, F filler nodes and a fleet of N more) gets the same
 * live dependencies: 8 accelerators, 2 storage roots, a live credential and certificate,
 * scheduler, telemetry and inventory-current rows, 2 open allocations, 3 artifact copies that
 * other nodes also hold and 1 that only it holds; liveness `offline`. The fleet (default 1,000)
 * makes those tables big enough that the planner reads them by index, as in production. Node A
 * has no history. Node B and each filler node get H history rows (default 100,000): 60 % events,
 * 30 % released allocations, 10 % inventory snapshots — and O finished operations besides
 * (default 1,000), since the preview also asks the operations table for running ones. They are
 * inserted with INSERT … SELECT generate_series, the nodes' rows interleaved as a fleet's would
 * be, so the history tables hold (F + 1) × H rows and an index that is missing or unused shows.
 * The history-count triggers are disabled during that bulk load and node_history_counts is set
 * from the rows afterwards (a plpgsql upsert per row would take most of the time budget; the
 * counts come out the same, and the preview of B is checked to report them). Then VACUUM ANALYZE,
 * the steady state autovacuum keeps.
 *
 * Measured, A and B always interleaved (pairs in random order) so drift on this shared machine
 * falls on both alike:
 *   HTTP c=1   the real API in a child process, operator key, one request at a time
 *   HTTP c=C   the same with C lanes (default 8)
 *   SQL        previewOf in this process on a pool of its own: the query cost without HTTP
 * and the ratios B/A of p50 and p99. For a noise floor, the same ratios between A's own samples
 * (odd against even pairs). Also: EXPLAIN (ANALYZE, BUFFERS) of every statement the preview sends,
 * for A and for B — the plan (B), its buffers and time for each node — flagging any sequential
 * scan of a history table; and the same under plan_cache_mode = force_generic_plan, the plans a
 * named prepared statement would get after five executions.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createDb } from '../db/client';
import { previewOf } from '../db/queries/decommission';
import type { NodeRow } from '../db/nodes';
import * as schema from '../db/schema';
import { nodes, pools } from '../db/schema';
import { newId } from '../domain/ids';
import { hashSecret } from '../domain/secrets';
import { startApiProcess } from './support/api-process';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Log,
  type Figure,
} from './support/benchmark';
import { cpuBetween, cpuMark, findPostmaster, type CpuSplit } from './support/cpu';
import { summarizeProfileFile, type ProfileSummary } from './support/cpu-profile';
import { environment, formatTable, writeResult } from './support/report';
import { startServices } from './support/services';
import { percentile, round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'preview';
const projectRoot = fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, '');

/** The goals of issue 5, item 7. */
const GOAL_RATIO = 1.3;
const GOAL_P99_MS = 50;

/** Tables whose rows are history: the preview must not scan them. */
const HISTORY_TABLES = ['events', 'allocations', 'inventory_snapshots', 'operations'];

const usage = [
  '  --history H          history rows of node B and of each filler node (default 100000)',
  '  --fillers F          filler nodes with as much history as B (default 10)',
  '  --operations O       finished operations of B and of each filler node, besides H (default 1000)',
  '  --fleet N            more nodes with the same live dependencies and no history (default 1000)',
  '  --requests N         measured previews per node, one at a time (default 500)',
  '  --warmup W           previews per node before measuring, not counted (default 50)',
  '  --concurrency C      lanes of the concurrent HTTP run; 0 skips it (default 8)',
  '  --concurrent-requests M  measured previews per node in the concurrent run (default 400)',
  "  --api-connections P  the API's Postgres pool size, and the SQL run's (default 10, as production)",
  '  --profile            V8 CPU profile of the API during the HTTP runs, summarized (slows them: its',
  '                       latencies are not the figures); the .cpuprofile files stay in a temporary directory',
].join('\n');

interface Options {
  history: number;
  fillers: number;
  operations: number;
  fleet: number;
  requests: number;
  warmup: number;
  concurrency: number;
  concurrentRequests: number;
  apiConnections: number;
  profile: boolean;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    history: { type: 'string' },
    fillers: { type: 'string' },
    operations: { type: 'string' },
    fleet: { type: 'string' },
    requests: { type: 'string' },
    warmup: { type: 'string' },
    concurrency: { type: 'string' },
    'concurrent-requests': { type: 'string' },
    'api-connections': { type: 'string' },
    profile: { type: 'boolean' },
  });
  const history = intOption('history', values.history, 100_000, 10, 10_000_000);
  const fillers = intOption('fillers', values.fillers, 10, 0, 100);
  // Events, released allocations and inventory snapshots: 60 / 30 / 10 %.
  return {
    history,
    fillers,
    operations: intOption('operations', values.operations, 1000, 0, 1_000_000),
    fleet: intOption('fleet', values.fleet, 1000, 0, 100_000),
    requests: intOption('requests', values.requests, 500, 10, 100_000),
    warmup: intOption('warmup', values.warmup, 50, 0, 10_000),
    concurrency: intOption('concurrency', values.concurrency, 8, 0, 64),
    concurrentRequests: intOption('concurrent-requests', values['concurrent-requests'], 400, 10, 100_000),
    apiConnections: intOption('api-connections', values['api-connections'], 10, 1, 100),
    profile: values.profile ?? false,
  };
}

export default defineBenchmark({
  summary: 'decommission preview of a node with 0 and with 100,000 history rows: p50/p99 and their ratio',
  usage,
  quick: ['--requests', '200', '--warmup', '20', '--concurrent-requests', '100'],
  run: measured(parseOptions, measure),
});

interface Split {
  events: number;
  allocations: number;
  inventorySnapshots: number;
}

function splitOf(history: number): Split {
  const events = Math.round(history * 0.6);
  const allocations = Math.round(history * 0.3);
  return { events, allocations, inventorySnapshots: history - events - allocations };
}

/** Latencies (ms) of A's and B's previews in one run. */
interface PairRun {
  a: number[];
  b: number[];
  failures: string[];
  seconds: number;
}

interface PathResult {
  name: string;
  concurrency: number;
  a: Summary;
  b: Summary;
  ratioP50: number;
  ratioP99: number;
  /** A against A: odd pairs' samples over even pairs' — what the ratio does with no difference. */
  noise: { ratioP50: number; ratioP99: number };
  failures: string[];
  seconds: number;
  /** Cores each party used during the run, and CPU ms per preview (A and B alike). */
  cpu: CpuSplit;
  cpuMsPerPreview: Record<string, number | null>;
  profile?: { path: string; summary: ProfileSummary };
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const split = splitOf(options.history);
  const loadBefore = loadavg().map((x) => round(x));
  log(
    `${NAME}: node A without history, node B and ${options.fillers} filler nodes with ${options.history} ` +
      `history rows each (${split.events} events, ${split.allocations} released allocations, ` +
      `${split.inventorySnapshots} inventory snapshots)`,
  );

  const services = await startServices(teardown, log);
  log(
    `postgres: ${services.postgres.source} (${services.postgres.database}); ` +
      `temporal: ${services.temporal.source} at ${services.temporal.address}`,
  );
  const setup = createDb(services.databaseUrl, { max: 2 });
  teardown.add('close the setup pool', () => setup.close());

  // ── the nodes, their live dependencies, their history ───────────────────────────────────────
  const seeded = await seed(setup.sql, setup.db, options, split, log);
  const { nodeA, nodeB } = seeded;

  // ── a pool of our own: checks, plans, the SQL-only run ─────────────────────────────────────
  const own = createDb(services.databaseUrl, { max: options.apiConnections });
  teardown.add('close the SQL pool', () => own.close());
  const rowA = await nodeRow(own.db, nodeA);
  const rowB = await nodeRow(own.db, nodeB);
  const check = await checkPreviews(own.db, rowA, rowB, split, options.operations);
  if (check.problems.length > 0) log(`preview check: ${check.problems.join('; ')}`);
  else log('preview check: A and B have the same cleanup and blockers; B reports its history counts');

  const plans = await explainPreview(services.databaseUrl, rowA, rowB);
  log(
    `EXPLAIN: ${plans.length} statements; history seq scans: custom plans ` +
      `${plans.filter((p) => p.custom.b.historySeqScans.length > 0).length}, generic plans ` +
      `${plans.filter((p) => p.generic.b.historySeqScans.length > 0).length}`,
  );

  // ── the API, in a process of its own ───────────────────────────────────────────────────────
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const api = await startApiProcess(
    {
      databaseUrl: services.databaseUrl,
      temporalAddress: services.temporal.address,
      taskQueue: `bench-preview-${process.pid}-${randomBytes(3).toString('hex')}`,
      bootstrapKeyHash: hashSecret(operatorKey),
      connections: options.apiConnections,
    },
    teardown,
  );
  log(`API process ${api.pid} listening on :${api.port}`);
  const http = httpPreviewer(api.port, operatorKey);
  teardown.add('close the HTTP agent', () => http.close());

  const postmaster = await findPostmaster(own.sql);
  if (postmaster === null) log('postgres: its processes are not visible here; no CPU figure for it');
  const paths: PathResult[] = [];
  const profileDir = options.profile ? mkdtempSync(join(tmpdir(), 'drydock-bench-preview-')) : null;
  /** A measured run between two CPU marks (and in a CPU profile of the API, with --profile). */
  const measured = async (name: string, lanes: number, run: () => Promise<PairRun>) => {
    const profilePath = profileDir && name === 'HTTP' ? join(profileDir, `api-c${lanes}.cpuprofile`) : null;
    if (profilePath) await api.profileStart();
    const start = cpuMark({ api: api.pid }, postmaster);
    const pairs = await run();
    const cpu = cpuBetween(start, cpuMark({ api: api.pid }, postmaster), 'bench');
    if (profilePath) await api.profileStop(profilePath);
    paths.push({
      ...pathResult(name, lanes, pairs, cpu),
      ...(profilePath
        ? { profile: { path: profilePath, summary: summarizeProfileFile(profilePath, projectRoot) } }
        : {}),
    });
    log(describe(paths.at(-1)!));
  };
  // HTTP, one at a time.
  await runPairs(http.preview, nodeA, nodeB, 1, options.warmup);
  await measured('HTTP', 1, () => runPairs(http.preview, nodeA, nodeB, 1, options.requests));
  // HTTP, C at a time.
  if (options.concurrency > 0) {
    const C = options.concurrency;
    await runPairs(http.preview, nodeA, nodeB, C, Math.ceil(options.warmup / C));
    await measured('HTTP', C, () =>
      runPairs(http.preview, nodeA, nodeB, C, Math.ceil(options.concurrentRequests / C)),
    );
  }
  // previewOf in this process: the SQL and the digest, no HTTP.
  const sqlPreview = async (nodeId: string) => {
    const { deps: _deps, ...preview } = await previewOf(own.db, nodeId === nodeA ? rowA : rowB);
    return preview.retained.length > 0;
  };
  await runPairs(sqlPreview, nodeA, nodeB, 1, options.warmup);
  await measured('SQL previewOf', 1, () => runPairs(sqlPreview, nodeA, nodeB, 1, options.requests));

  const result = report({ options, split, services, seeded, check, plans, paths, loadBefore });
  const path = writeResult(NAME, result);
  console.log(`\nwrote ${path}`);
  if (profileDir) console.log(`CPU profiles (open in Chrome DevTools or VS Code): ${profileDir}`);
  const failed = paths.some((p) => p.failures.length > 0) || check.problems.length > 0;
  return failed ? 1 : 0;
}

// ── seeding ─────────────────────────────────────────────────────────────────────────────────────

interface Seeded {
  nodeA: string;
  nodeB: string;
  fillerIds: string[];
  /** Rows per table after loading. */
  tables: Record<string, number>;
  timings: { liveMs: number; historyMs: number; countsMs: number; vacuumMs: number };
}

async function seed(
  sql: postgres.Sql,
  db: ReturnType<typeof createDb>['db'],
  options: Options,
  split: Split,
  log: Log,
): Promise<Seeded> {
  const nodeA = newId('node');
  const nodeB = newId('node');
  const fillerIds = Array.from({ length: options.fillers }, () => newId('node'));
  const fleetIds = Array.from({ length: options.fleet }, () => newId('node'));
  const all = [nodeA, nodeB, ...fillerIds, ...fleetIds];
  const withHistory = [nodeB, ...fillerIds];
  const hostname = (i: number) =>
    i === 0
      ? 'bench-a'
      : i === 1
        ? 'bench-b'
        : i < 2 + options.fillers
          ? `bench-f${String(i - 2).padStart(2, '0')}`
          : `bench-n${String(i - 2 - options.fillers).padStart(5, '0')}`;
  await db.insert(pools).values({ id: 'bench', kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
  for (let i = 0; i < all.length; i += 2000) {
    await db.insert(nodes).values(
      all.slice(i, i + 2000).map((id, j) => ({
        id,
        poolId: 'bench',
        tenantId: 'bench',
        siteId: 'fra1',
        hostname: hostname(i + j),
        displayName: i + j === 0 ? 'Bench A' : i + j === 1 ? 'Bench B' : null,
        provisionState: 'adopted' as const,
        connectivity: 'disconnected' as const,
        // Offline, all of them: the API's liveness sweep leaves them be while we measure.
        liveness: 'offline' as const,
      })),
    );
  }

  // Live dependencies, the same for every node. `n.ord` numbers the nodes for unique ids.
  let t0 = performance.now();
  const ids = sql.array(all);
  await sql.begin(async (tx) => {
    await tx`
      insert into accelerators (id, node_id, model, serial)
      select 'acc_' || lpad(n.ord || 'x' || g, 26, '0'), n.id, 'H100-SXM5-80GB', 'GPU-' || n.ord || '-' || g
      from unnest(${ids}::text[]) with ordinality n(id, ord), generate_series(1, 8) g`;
    await tx`
      insert into storage_roots (id, node_id, path, bytes)
      select 'sr_' || lpad(n.ord || 'x' || g, 26, '0'), n.id, '/data' || g, 3840000000000
      from unnest(${ids}::text[]) with ordinality n(id, ord), generate_series(1, 2) g`;
    await tx`
      insert into node_credentials (id, node_id, secret_hash, identity_generation, expires_at)
      select 'cred_' || lpad(n.ord::text, 26, '0'), n.id, md5(n.id || random()::text), 1, now() + interval '1 day'
      from unnest(${ids}::text[]) with ordinality n(id, ord)`;
    await tx`
      insert into node_certificates (serial, node_id, public_key, identity_generation, expires_at)
      select 'serial-' || n.ord, n.id, 'pk-' || md5(n.id), 1, now() + interval '1 year'
      from unnest(${ids}::text[]) with ordinality n(id, ord)`;
    await tx`insert into scheduler_entries (node_id, pool_id) select id, 'bench' from unnest(${ids}::text[]) id`;
    await tx`
      insert into telemetry_current (node_id, last_heartbeat_at, data)
      select id, now() - interval '5 minutes', '{"gpuUtil": 0.0, "temps": [41, 42, 40, 43, 41, 42, 40, 44]}'
      from unnest(${ids}::text[]) id`;
    await tx`
      insert into inventory_current (node_id, data)
      select id, ${inventoryJson()}::jsonb from unnest(${ids}::text[]) id`;
    // Two open allocations: one ends tomorrow, one has no end.
    await tx`
      insert into allocations (id, node_id, tenant_id, kind, ends_at)
      select 'alloc_' || lpad('open' || n.ord || 'x' || g, 26, '0'), n.id, 'bench',
             (array['job', 'lease'])[g], case g when 1 then now() + interval '1 day' end
      from unnest(${ids}::text[]) with ordinality n(id, ord), generate_series(1, 2) g`;
    // Three artifacts every node holds a copy of (never sole), and one each node alone holds.
    await tx`
      insert into artifact_copies (id, artifact_id, node_id, path)
      select 'copy_' || n.ord || '_' || g, 'art_shared_' || g, n.id, '/data1/artifacts/shared-' || g
      from unnest(${ids}::text[]) with ordinality n(id, ord), generate_series(1, 3) g
      union all
      select 'copy_' || n.ord || '_sole', 'art_sole_' || n.ord, n.id, '/data2/artifacts/sole'
      from unnest(${ids}::text[]) with ordinality n(id, ord)`;
  });
  const liveMs = performance.now() - t0;

  // History, B's rows interleaved with the fillers' (row g belongs to node g mod k).
  t0 = performance.now();
  const k = withHistory.length;
  const hist = sql.array(withHistory);
  const triggers = [
    ['events', 'events_count_history'],
    ['allocations', 'allocations_count_history'],
    ['inventory_snapshots', 'inventory_snapshots_count_history'],
    ['operations', 'operations_count_history'],
  ] as const;
  await sql.begin(async (tx) => {
    for (const [table, trigger] of triggers)
      await tx.unsafe(`alter table ${table} disable trigger ${trigger}`);
    const events = split.events * k;
    await tx`
      insert into events (node_id, tenant_id, type, actor, reason, data, created_at)
      select (${hist}::text[])[1 + g % ${k}], 'bench',
             (array['node.heartbeat_lost', 'node.cordoned', 'node.uncordoned', 'node.labeled',
                    'node.liveness_changed', 'allocation.released'])[1 + (g / ${k}) % 6],
             'bench', case when g % 7 = 0 then 'scheduled maintenance' end,
             jsonb_build_object('seq', g, 'from', 'alive', 'to', 'unreachable', 'generation', g / ${k}),
             now() - make_interval(secs => (${events} - g) * 10)
      from generate_series(0, ${events - 1}) g`;
    log(`history: ${events} events`);
    const allocs = split.allocations * k;
    await tx`
      insert into allocations (id, node_id, tenant_id, kind, created_at, ends_at, released_at, released_by)
      select 'alloc_' || lpad(g::text, 26, '0'), (${hist}::text[])[1 + g % ${k}], 'bench',
             (array['job', 'deployment', 'request', 'probe', 'lease', 'residency'])[1 + (g / ${k}) % 6],
             t - interval '2 hours', case when g % 3 <> 0 then t end, t, 'bench'
      from generate_series(0, ${allocs - 1}) g,
           lateral (select now() - make_interval(secs => (${allocs} - g) * 20) as t) x`;
    log(`history: ${allocs} released allocations`);
    const snaps = split.inventorySnapshots * k;
    await tx`
      insert into inventory_snapshots (id, node_id, data, taken_at)
      select 'inv_' || lpad(g::text, 26, '0'), (${hist}::text[])[1 + g % ${k}],
             ${inventoryJson()}::jsonb || jsonb_build_object('seq', g),
             now() - make_interval(secs => (${snaps} - g) * 60)
      from generate_series(0, ${snaps - 1}) g`;
    log(`history: ${snaps} inventory snapshots`);
    const ops = options.operations * k;
    await tx`
      insert into operations (id, kind, node_id, pool_id, status, workflow_id, actor, reason,
                              result, created_at, updated_at, completed_at)
      select 'op_' || lpad(g::text, 26, '0'), o.kind, (${hist}::text[])[1 + g % ${k}], 'bench',
             (array['succeeded', 'succeeded', 'succeeded', 'failed', 'cancelled'])[1 + (g / ${k}) % 5],
             o.kind || '/' || (${hist}::text[])[1 + g % ${k}], 'bench', 'routine maintenance',
             '{"evicted": 2}', t - interval '30 minutes', t, t
      from generate_series(0, ${Math.max(0, ops - 1)}) g,
           lateral (select (array['drain', 'purge', 'remediation', 'drain'])[1 + (g / ${k}) % 4] as kind,
                           now() - make_interval(secs => (${ops} - g) * 600) as t) o
      where ${ops} > 0`;
    log(`history: ${ops} finished operations`);
    for (const [table, trigger] of triggers)
      await tx.unsafe(`alter table ${table} enable trigger ${trigger}`);
  });
  const historyMs = performance.now() - t0;

  // The counters the disabled triggers would have kept, from the rows themselves.
  t0 = performance.now();
  await sql`
    insert into node_history_counts (node_id, events, allocations, operations, inventory_snapshots)
    select n.id, coalesce(e.c, 0), coalesce(a.c, 0), coalesce(o.c, 0), coalesce(s.c, 0)
    from nodes n
    left join (select node_id, count(*) c from events group by node_id) e on e.node_id = n.id
    left join (select node_id, count(*) c from allocations group by node_id) a on a.node_id = n.id
    left join (select node_id, count(*) c from operations group by node_id) o on o.node_id = n.id
    left join (select node_id, count(*) c from inventory_snapshots group by node_id) s on s.node_id = n.id
    on conflict (node_id) do update set
      events = excluded.events, allocations = excluded.allocations,
      operations = excluded.operations, inventory_snapshots = excluded.inventory_snapshots`;
  const countsMs = performance.now() - t0;

  t0 = performance.now();
  await sql`vacuum (analyze)`;
  const vacuumMs = performance.now() - t0;

  const tableNames = [
    'events',
    'allocations',
    'inventory_snapshots',
    'operations',
    'accelerators',
    'storage_roots',
    'node_credentials',
    'node_certificates',
    'artifact_copies',
    'scheduler_entries',
    'telemetry_current',
    'inventory_current',
    'node_history_counts',
    'nodes',
  ];
  const tables: Record<string, number> = {};
  for (const name of tableNames) {
    const [row] = await sql<{ n: string }[]>`select count(*)::text as n from ${sql(name)}`;
    tables[name] = Number(row!.n);
  }
  const [size] = await sql<
    { mb: string }[]
  >`select round(pg_database_size(current_database()) / 1048576.0)::text as mb`;
  log(
    `seeded: live ${(liveMs / 1000).toFixed(1)} s, history ${(historyMs / 1000).toFixed(1)} s, counters ` +
      `${(countsMs / 1000).toFixed(1)} s, vacuum analyze ${(vacuumMs / 1000).toFixed(1)} s; database ${size!.mb} MB`,
  );
  return { nodeA, nodeB, fillerIds, tables, timings: { liveMs, historyMs, countsMs, vacuumMs } };
}

/** An inventory report of about 1 KB: 8 accelerators, 2 storage roots, the host. */
function inventoryJson(): string {
  return JSON.stringify({
    host: { cpu: 'AMD EPYC 9454 48-Core', memoryBytes: 1649267441664, kernel: '6.8.0-45-generic' },
    accelerators: Array.from({ length: 8 }, (_, i) => ({
      model: 'H100-SXM5-80GB',
      serial: `GPU-${String(i).padStart(4, '0')}-1652`,
      driver: '550.90.07',
      memoryBytes: 85520809984,
    })),
    storageRoots: [
      { path: '/data1', bytes: 3840000000000 },
      { path: '/data2', bytes: 3840000000000 },
    ],
  });
}

async function nodeRow(db: ReturnType<typeof createDb>['db'], id: string): Promise<NodeRow> {
  const row = await db.query.nodes.findFirst({ where: (n, { eq }) => eq(n.id, id) });
  if (!row) throw new Error(`node ${id} is missing`);
  return row;
}

// ── checks ──────────────────────────────────────────────────────────────────────────────────────

interface PreviewCheck {
  a: { blockers: number; cleanup: unknown; retained: unknown; bytes: number };
  b: { blockers: number; cleanup: unknown; retained: unknown; bytes: number };
  problems: string[];
}

/** A and B must differ in history only; B's retained counts must be its rows. */
async function checkPreviews(
  db: ReturnType<typeof createDb>['db'],
  a: NodeRow,
  b: NodeRow,
  split: Split,
  operations: number,
): Promise<PreviewCheck> {
  const { deps: _da, ...pa } = await previewOf(db, a);
  const { deps: _db, ...pb } = await previewOf(db, b);
  const problems: string[] = [];
  if (JSON.stringify(pa.cleanup) !== JSON.stringify(pb.cleanup)) problems.push('cleanup differs');
  if (pa.blockers.map((x) => x.kind).join() !== pb.blockers.map((x) => x.kind).join()) {
    problems.push('blockers differ');
  }
  const retained = Object.fromEntries(pb.retained.map((r) => [r.kind, r.count]));
  const expected = {
    events: split.events,
    allocations: split.allocations + 2,
    operations: operations,
    'inventory-snapshots': split.inventorySnapshots,
  };
  if (JSON.stringify(retained) !== JSON.stringify(expected)) {
    problems.push(`B retains ${JSON.stringify(retained)}, expected ${JSON.stringify(expected)}`);
  }
  return {
    a: {
      blockers: pa.blockers.length,
      cleanup: pa.cleanup,
      retained: pa.retained,
      bytes: JSON.stringify(pa).length,
    },
    b: {
      blockers: pb.blockers.length,
      cleanup: pb.cleanup,
      retained: pb.retained,
      bytes: JSON.stringify(pb).length,
    },
    problems,
  };
}

// ── EXPLAIN ─────────────────────────────────────────────────────────────────────────────────────

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** One scan of a table in a plan. */
interface ScanSummary {
  relation: string;
  /** "Index Scan allocations_open_idx", "Bitmap Heap Scan accelerators via accelerators_node_idx". */
  how: string;
  /** Rows it returned, and rows it read: returned, or removed by a filter or a recheck. */
  rows: number;
  rowsRead: number;
  /** Shared buffers hit + read, its bitmap index scans included. */
  buffers: number;
}

interface PlanSummary {
  /** Scans in plan order, innermost first. */
  scans: ScanSummary[];
  historySeqScans: string[];
  /** Rows the scans read: returned, and removed by a filter or a recheck. */
  rowsRead: number;
  buffers: number;
  executionMs: number;
  /** The whole plan, as EXPLAIN (FORMAT JSON) gave it. */
  plan: PlanNode;
}

interface StatementPlans {
  /** The first table the statement reads, or `previewOf #n` when it reads many. */
  table: string;
  sql: string;
  /** As the API runs it: an unnamed statement, planned for its parameters. */
  custom: { a: PlanSummary; b: PlanSummary };
  /** As a named prepared statement after five executions: planned for any parameters. */
  generic: { a: PlanSummary; b: PlanSummary };
}

/**
 * Every statement previewOf sends for B (captured from the driver), explained with A's and B's
 * parameters: the plan each node gets, its buffers and time.
 */
async function explainPreview(url: string, a: NodeRow, b: NodeRow): Promise<StatementPlans[]> {
  const seen: { query: string; params: unknown[] }[] = [];
  const capture = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_conn, query, params) => void seen.push({ query, params: params as unknown[] }),
  });
  const explain = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await capture`select 1`; // the driver's own first queries (pg_type) are not the preview's
    seen.length = 0;
    await previewOf(drizzle(capture, { schema }), b);
    const statements = [...new Map(seen.map((s) => [s.query, s])).values()];
    const forNode = (params: unknown[], id: string) => params.map((p) => (p === b.id ? id : p));
    const out: StatementPlans[] = [];
    const reserved = await explain.reserve();
    try {
      for (const [i, s] of statements.entries()) {
        const run = async (params: unknown[]) => {
          const rows = await reserved.unsafe(
            `explain (analyze, buffers, format json) ${s.query}`,
            params as never[],
          );
          return summarizePlan(rows[0]!['QUERY PLAN']);
        };
        // Warm: the first execution reads what the second finds in the cache.
        await run(forNode(s.params, a.id));
        await run(s.params);
        const custom = { a: await run(forNode(s.params, a.id)), b: await run(s.params) };
        const literals = (params: unknown[]) =>
          params.length ? `(${params.map((p) => `'${String(p).replace(/'/g, "''")}'`).join(', ')})` : '';
        await reserved.unsafe(`prepare bench_stmt_${i} as ${s.query}`);
        await reserved.unsafe('set plan_cache_mode = force_generic_plan');
        const generic = async (params: unknown[]) => {
          const rows = await reserved.unsafe(
            `explain (analyze, buffers, format json) execute bench_stmt_${i}${literals(params)}`,
          );
          return summarizePlan(rows[0]!['QUERY PLAN']);
        };
        const genericA = await generic(forNode(s.params, a.id));
        const genericB = await generic(s.params);
        await reserved.unsafe('reset plan_cache_mode');
        await reserved.unsafe(`deallocate bench_stmt_${i}`);
        out.push({
          table:
            custom.b.scans.length > 1
              ? `previewOf${statements.length > 1 ? ` #${i + 1}` : ''}`
              : (/\bfrom "?([a-z_]+)"?/i.exec(s.query)?.[1] ?? `#${i + 1}`),
          sql: s.query,
          custom,
          generic: { a: genericA, b: genericB },
        });
      }
    } finally {
      reserved.release();
    }
    return out;
  } finally {
    await capture.end({ timeout: 5 });
    await explain.end({ timeout: 5 });
  }
}

function summarizePlan(json: unknown): PlanSummary {
  const [top] = (typeof json === 'string' ? JSON.parse(json) : json) as {
    Plan: PlanNode;
    'Execution Time': number;
  }[];
  const scans: ScanSummary[] = [];
  const historySeqScans: string[] = [];
  let rowsRead = 0;
  const walk = (node: PlanNode) => {
    for (const child of node.Plans ?? []) walk(child);
    const relation = node['Relation Name'];
    if (!relation) return;
    const loops = node['Actual Loops'] ?? 1;
    const rows = (node['Actual Rows'] ?? 0) * loops;
    const read =
      rows + ((node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops;
    rowsRead += read;
    // A bitmap heap scan names its indexes in the bitmap index scans below it.
    const bitmapIndexes: string[] = [];
    const collect = (n: PlanNode) => {
      if (n['Node Type'] === 'Bitmap Index Scan' && n['Index Name']) bitmapIndexes.push(n['Index Name']);
      for (const child of n.Plans ?? []) collect(child);
    };
    if (node['Node Type'] === 'Bitmap Heap Scan') collect(node);
    const how = node['Index Name']
      ? `${node['Node Type']} ${node['Index Name']}`
      : bitmapIndexes.length > 0
        ? `Bitmap Heap Scan ${relation} via ${[...new Set(bitmapIndexes)]
            .map((name) => {
              const times = bitmapIndexes.filter((x) => x === name).length;
              return times > 1 ? `${name} ×${times}` : name;
            })
            .join(', ')}`
        : `${node['Node Type']} ${relation}`;
    scans.push({
      relation,
      how,
      rows,
      rowsRead: read,
      buffers: (node['Shared Hit Blocks'] ?? 0) + (node['Shared Read Blocks'] ?? 0),
    });
    if (node['Node Type'] === 'Seq Scan' && HISTORY_TABLES.includes(relation)) historySeqScans.push(relation);
  };
  walk(top!.Plan);
  return {
    scans,
    historySeqScans,
    rowsRead,
    buffers: (top!.Plan['Shared Hit Blocks'] ?? 0) + (top!.Plan['Shared Read Blocks'] ?? 0),
    executionMs: round(top!['Execution Time'], 3),
    plan: top!.Plan,
  };
}

// ── load ────────────────────────────────────────────────────────────────────────────────────────

/** POST /v1/nodes/{id}/decommission/preview over keep-alive connections; true on a 200. */
function httpPreviewer(port: number, operatorKey: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const preview = (nodeId: string) =>
    new Promise<boolean>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/v1/nodes/${nodeId}/decommission/preview`,
          headers: { authorization: `Bearer ${operatorKey}`, 'content-length': 0 },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.once('end', () => {
            if (res.statusCode === 200) resolve(true);
            else reject(new Error(`${res.statusCode} ${text.slice(0, 300)}`));
          });
          res.once('error', reject);
        },
      );
      req.once('error', reject);
      req.end();
    });
  return { preview, close: () => agent.destroy() };
}

/**
 * `lanes` lanes, each sending `pairs` pairs one after the other: A and B in a random order, so any
 * drift of the machine falls on both. Latencies per node, ms.
 */
async function runPairs(
  send: (nodeId: string) => Promise<boolean>,
  nodeA: string,
  nodeB: string,
  lanes: number,
  pairs: number,
): Promise<PairRun> {
  const run: PairRun = { a: [], b: [], failures: [], seconds: 0 };
  const started = performance.now();
  const one = async (nodeId: string, into: number[]) => {
    const t0 = performance.now();
    try {
      await send(nodeId);
      into.push(performance.now() - t0);
    } catch (error) {
      if (run.failures.length < 5) run.failures.push(`${nodeId}: ${(error as Error).message}`);
    }
  };
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = 0; i < pairs; i++) {
        if (Math.random() < 0.5) {
          await one(nodeA, run.a);
          await one(nodeB, run.b);
        } else {
          await one(nodeB, run.b);
          await one(nodeA, run.a);
        }
      }
    }),
  );
  run.seconds = round((performance.now() - started) / 1000, 1);
  return run;
}

function pathResult(name: string, concurrency: number, run: PairRun, cpu: CpuSplit): PathResult {
  const a = summarize(run.a);
  const b = summarize(run.b);
  const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
  const odd = sorted(run.a.filter((_, i) => i % 2 === 1));
  const even = sorted(run.a.filter((_, i) => i % 2 === 0));
  return {
    name,
    concurrency,
    a,
    b,
    ratioP50: round(b.p50 / a.p50),
    ratioP99: round(b.p99 / a.p99),
    noise: {
      ratioP50: round(percentile(odd, 50) / percentile(even, 50)),
      ratioP99: round(percentile(odd, 99) / percentile(even, 99)),
    },
    failures: run.failures,
    seconds: run.seconds,
    cpu,
    cpuMsPerPreview: Object.fromEntries(
      Object.entries(cpu.cores)
        .filter(([party]) => party !== 'machine' && party !== 'other')
        .map(([party, cores]) => [
          party,
          cores === null ? null : round((cores * cpu.seconds * 1000) / (run.a.length + run.b.length), 3),
        ]),
    ),
  };
}

function describe(p: PathResult): string {
  return (
    `${p.name} c=${p.concurrency}: A p50 ${p.a.p50} p99 ${p.a.p99} ms, B p50 ${p.b.p50} p99 ${p.b.p99} ms, ` +
    `B/A ${p.ratioP50}× / ${p.ratioP99}× (${p.a.count + p.b.count} previews in ${p.seconds} s` +
    `${p.failures.length ? `, failures: ${p.failures.join(' | ')}` : ''})`
  );
}

// ── report ──────────────────────────────────────────────────────────────────────────────────────

function report(input: {
  options: Options;
  split: Split;
  services: Awaited<ReturnType<typeof startServices>>;
  seeded: Seeded;
  check: PreviewCheck;
  plans: StatementPlans[];
  paths: PathResult[];
  loadBefore: number[];
}) {
  const { options, split, seeded, plans, paths } = input;
  const environ = environment();
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const cpuCell = (v: number | null | undefined) => (v === null || v === undefined ? '-' : String(v));
  const goals = paths.map((p) => ({
    path: `${p.name} c=${p.concurrency}`,
    ratioP50: p.ratioP50 <= GOAL_RATIO,
    ratioP99: p.ratioP99 <= GOAL_RATIO,
    // The latency goal is the API's; the SQL run only splits its time.
    p99: p.name === 'HTTP' ? p.b.p99 <= GOAL_P99_MS && p.a.p99 <= GOAL_P99_MS : null,
  }));
  const n = (x: number) => x.toLocaleString('en-US');
  const history = `${n(options.history)} history rows`;
  const figures: Figure[] = paths.flatMap((p, i) => [
    ...(['p50', 'p99'] as const).map((q) => ({
      figure: `preview ${q}, ${p.name} c=${p.concurrency}: node with ${history} vs none`,
      goal: `≤ ${GOAL_RATIO}×`,
      value: `${p.b[q]} ms`,
      baseline: `${p.a[q]} ms`,
      ratio: q === 'p50' ? p.ratioP50 : p.ratioP99,
      met: q === 'p50' ? goals[i]!.ratioP50 : goals[i]!.ratioP99,
    })),
    ...(goals[i]!.p99 === null
      ? []
      : [
          {
            figure: `preview p99, ${p.name} c=${p.concurrency}, node with ${history}`,
            goal: `≤ ${GOAL_P99_MS} ms`,
            value: `${Math.max(p.a.p99, p.b.p99)} ms`,
            baseline: '—',
            ratio: null,
            met: goals[i]!.p99!,
          },
        ]),
  ]);
  const lines = [
    '',
    `${NAME}: decommission preview, node A (no history) against node B (${n(options.history)} history rows: ` +
      `${n(split.events)} events, ${n(split.allocations)} released allocations, ${n(split.inventorySnapshots)} ` +
      `inventory snapshots) and ${n(options.operations)} finished operations; ${options.fillers} filler nodes ` +
      `with as much history, ${n(options.fleet)} more nodes without`,
    `same live dependencies on every node: 8 accelerators, 2 storage roots, 1 credential, 1 certificate, ` +
      `scheduler/telemetry/inventory-current rows, 2 open allocations, 4 artifact copies (1 sole); offline`,
    `tables: ${Object.entries(seeded.tables)
      .filter(([, rows]) => rows > 1000)
      .map(([t, rows]) => `${t} ${n(rows)}`)
      .join(', ')} rows; postgres ${input.services.postgres.source}; API pool ${options.apiConnections}`,
    `${environ.cpus} CPUs, load ${input.loadBefore.join(' ')} before, ${environ.loadavg.join(' ')} after`,
    '',
    formatTable(
      ['path', 'node', 'n', 'p50', 'p90', 'p99', 'max', 'mean'],
      paths.flatMap((p) =>
        (['a', 'b'] as const).map((k) => [
          `${p.name} c=${p.concurrency}`,
          k === 'a' ? 'A (0)' : `B (${n(options.history)})`,
          p[k].count,
          p[k].p50,
          p[k].p90,
          p[k].p99,
          p[k].max,
          p[k].mean,
        ]),
      ),
    ),
    '(ms; A and B interleaved, pairs in random order)',
    '',
    formatTable(
      [
        'path',
        'B/A p50',
        'B/A p99',
        'A/A p50',
        'A/A p99',
        `p50 ≤${GOAL_RATIO}×`,
        `p99 ≤${GOAL_RATIO}×`,
        `p99 ≤${GOAL_P99_MS}ms`,
      ],
      paths.map((p, i) => [
        `${p.name} c=${p.concurrency}`,
        `${p.ratioP50}×`,
        `${p.ratioP99}×`,
        `${p.noise.ratioP50}×`,
        `${p.noise.ratioP99}×`,
        yes(goals[i]!.ratioP50),
        yes(goals[i]!.ratioP99),
        goals[i]!.p99 === null ? '-' : yes(goals[i]!.p99!),
      ]),
    ),
    "(A/A: the same ratios between two halves of A's own samples, the noise a ratio has here)",
    '',
    formatTable(
      [
        'CPU per preview (ms)',
        'bench process',
        'API',
        'postgres',
        'previews/s',
        'machine cores',
        "others' cores",
      ],
      paths.map((p) => [
        `${p.name} c=${p.concurrency}`,
        cpuCell(p.cpuMsPerPreview.bench),
        p.name === 'HTTP' ? cpuCell(p.cpuMsPerPreview.api) : '',
        cpuCell(p.cpuMsPerPreview.postgres),
        round((p.a.count + p.b.count) / p.cpu.seconds, 1),
        cpuCell(p.cpu.cores.machine),
        cpuCell(p.cpu.cores.other),
      ]),
    ),
    `(the bench process is the HTTP client, or previewOf itself in the SQL run; others: the rest of the ` +
      `machine's busy time — Temporal, other people's work — while the run lasted)`,
    '',
    formatTable(
      [
        'statement',
        'table',
        'scan for B, as the API plans it',
        'rows A/B',
        'buf A/B',
        'generic plan',
        'rows A/B',
      ],
      plans.flatMap((p) =>
        p.custom.b.scans.map((scan, i) => {
          const nth = p.custom.b.scans.slice(0, i).filter((x) => x.relation === scan.relation).length;
          const match = (plan: PlanSummary) => plan.scans.filter((x) => x.relation === scan.relation)[nth];
          const a = match(p.custom.a);
          const gb = match(p.generic.b);
          const ga = match(p.generic.a);
          return [
            i === 0 ? p.table : '',
            scan.relation,
            `${scan.how} (${scan.rows} rows)`.replace(` ${scan.relation} via `, ' via '),
            `${a?.rowsRead ?? '-'}/${scan.rowsRead}`,
            `${a?.buffers ?? '-'}/${scan.buffers}`,
            gb?.how === scan.how ? 'same' : (gb?.how ?? '-'),
            `${ga?.rowsRead ?? '-'}/${gb?.rowsRead ?? '-'}`,
          ];
        }),
      ),
    ),
    ...plans.map(
      (p) =>
        `${p.table}: ${p.custom.b.scans.length} scans; executed in ${p.custom.a.executionMs} ms for A, ` +
        `${p.custom.b.executionMs} ms for B; ${p.custom.a.buffers} / ${p.custom.b.buffers} buffers; ` +
        `rows read ${p.custom.a.rowsRead} / ${p.custom.b.rowsRead} (generic plan: ${p.generic.a.rowsRead} / ` +
        `${p.generic.b.rowsRead})`,
    ),
    `(EXPLAIN (ANALYZE, BUFFERS) of each statement previewOf sends, with A's id and with B's, as the API ` +
      `sends it (unnamed: planned for its values) and as a prepared statement's generic plan would run it; ` +
      `rows: read by the scan, returned or filtered out; buf: shared buffers hit + read; seq scans of a ` +
      `history table: ${
        plans
          .flatMap((p) => [
            ...p.custom.b.historySeqScans.map((t) => `${t} (custom)`),
            ...p.generic.b.historySeqScans.map((t) => `${t} (generic)`),
          ])
          .join(', ') || 'none'
      })`,
    ...paths.flatMap((p) => {
      const profile = p.profile?.summary;
      if (!profile) return [];
      const previews = p.a.count + p.b.count;
      return [
        '',
        `${p.name} c=${p.concurrency}: API CPU profile (main thread), ${profile.busyMs} ms busy of ` +
          `${profile.wallMs} ms: ${round(profile.busyMs / previews, 3)} ms per preview (profiler on: ` +
          `these latencies are not the figures)`,
        formatTable(
          ['by innermost package or file on the stack', 'ms', '%'],
          profile.byLibrary.slice(0, 12).map((e) => [e.name, e.ms, e.percent]),
        ),
        '',
        formatTable(
          ['self time by function', 'ms', '%'],
          profile.byFunction.slice(0, 15).map((e) => [e.name, e.ms, e.percent]),
        ),
      ];
    }),
    '',
    `preview check: ${input.check.problems.length === 0 ? 'ok' : input.check.problems.join('; ')}; B retains ` +
      `${(input.check.b.retained as { kind: string; count: number }[]).map((r) => `${r.kind} ${n(r.count)}`).join(', ')}; ` +
      `${input.check.b.blockers} blockers each; body ${input.check.a.bytes} / ${input.check.b.bytes} bytes`,
    `seeding: live ${round(seeded.timings.liveMs / 1000, 1)} s, history ${round(seeded.timings.historyMs / 1000, 1)} s, ` +
      `counters ${round(seeded.timings.countsMs / 1000, 1)} s, vacuum analyze ${round(seeded.timings.vacuumMs / 1000, 1)} s`,
  ];
  console.log(lines.join('\n'));
  return {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    split,
    goals: { ratio: GOAL_RATIO, p99Ms: GOAL_P99_MS, met: goals },
    figures,
    environment: { ...environ, loadavgBefore: input.loadBefore },
    services: input.services,
    nodes: { a: seeded.nodeA, b: seeded.nodeB, fillers: seeded.fillerIds },
    tables: seeded.tables,
    seeding: seeded.timings,
    check: input.check,
    paths,
    plans,
  };
}
