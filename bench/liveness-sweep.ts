/**
 * liveness-sweep: how long one liveness sweep transaction takes at 10,000 nodes (issue 4, item
 * 10; docs/lifecycle/liveness.md: one sweep every 5 s, one transaction each). Goal: ≤ 100 ms.
 *
 * A throwaway database (no Temporal: the sweep is called directly, as the workflow's activity
 * `createLivenessActivities(db).sweepLiveness(DEFAULT_LIVENESS)`) with pools of each kind the
 * sweep tells apart — bare metal, and provider / vps-host pools that set `lostAfter` — and nodes
 * inserted directly, each with a certificate (the join anchor a never-seen node counts from),
 * adopted, connected, alive and freshly seen. Three scenarios, each swept repeatedly:
 *
 *   steady  every node fresh: the sweep finds nothing to do
 *   1%      1% of the nodes aged past the 40 s lease before each sweep: they turn unreachable
 *   10%     a mass event: 10% aged
 *
 * Before each sweep (untimed) the nodes the last one changed are put back (alive, connected,
 * fresh), the next batch is aged, and the controller's last-sweep mark is set 5 s back, as the
 * workflow leaves it (no outage grace). Each sweep is timed from the call to its commit; its
 * statements (round trips) are counted through the pool's debug hook.
 *
 * Baseline, in the same run: the same scenarios at 1,000 nodes (the first 1,000 of the same
 * database, before the other 9,000 are added); the figure is the ratio 10k / 1k, how the sweep
 * scales. The candidate query is run once more under EXPLAIN ANALYZE at each size (1% aged) and
 * its plan summarized: sequential scan or index.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { createLivenessActivities, type SweepResult } from '../activities/liveness';
import * as schema from '../db/schema';
import { nodeCertificates, nodes } from '../db/schema';
import { newId } from '../domain/ids';
import { DEFAULT_LIVENESS } from '../domain/liveness';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { environment, formatTable, writeResult } from './support/report';
import { startBenchDatabase } from './support/services';
import { round, summarize, type Summary } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'liveness-sweep';
/** The goal of issue 4, item 10, at 10,000 nodes. */
const GOAL_MS = 100;
/** The goals of issue 15: a 10% mass aging at 10,000 nodes, and a sweep with nothing due at 100,000. */
const MASS_AGING = { nodes: 10_000, ms: 100 };
const STEADY = { nodes: 100_000, ms: 50 };

const usage = [
  '  --nodes N            nodes of the measured size (default 10000)',
  '  --baseline-nodes B   nodes of the baseline size, swept first (default 1000)',
  '  --iterations I       sweeps per scenario and size (default 30)',
  '  --budget-seconds S   but stop a scenario after this long, once it has 5 sweeps (default 8)',
].join('\n');

interface Options {
  nodes: number;
  baselineNodes: number;
  iterations: number;
  budgetSeconds: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    nodes: { type: 'string' },
    'baseline-nodes': { type: 'string' },
    iterations: { type: 'string' },
    'budget-seconds': { type: 'string' },
  });
  const nodeCount = intOption('nodes', values.nodes, 10_000, 100, 1_000_000);
  return {
    nodes: nodeCount,
    baselineNodes: intOption('baseline-nodes', values['baseline-nodes'], 1_000, 100, nodeCount),
    iterations: intOption('iterations', values.iterations, 30, 1, 1000),
    budgetSeconds: intOption('budget-seconds', values['budget-seconds'], 8, 1, 3600),
  };
}

export default defineBenchmark({
  summary: 'one liveness sweep transaction at 10,000 nodes (steady, 1% and 10% aged), against 1,000 nodes',
  usage,
  // Both goals' sizes in one run of about 90 s (seeding 100,000 nodes is most of it).
  quick: ['--nodes', '100000', '--baseline-nodes', '10000', '--iterations', '8', '--budget-seconds', '3'],
  run: measured(parseOptions, measure),
});

/** The pools, and the share of the nodes each gets. */
const POOLS = [
  { id: 'metal', kind: 'bare-metal' as const, policy: {}, share: 0.6 },
  { id: 'cloud', kind: 'provider' as const, policy: { lostAfter: '10m' }, share: 0.3 },
  { id: 'vps', kind: 'vps-host' as const, policy: { lostAfter: '30m' }, share: 0.1 },
];

interface Scenario {
  name: 'steady' | '1%' | '10%';
  /** Share of the nodes aged past the lease before each sweep. */
  aged: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'steady', aged: 0 },
  { name: '1%', aged: 0.01 },
  { name: '10%', aged: 0.1 },
];

interface ScenarioRun {
  scenario: Scenario['name'];
  nodes: number;
  agedPerSweep: number;
  sweeps: number;
  /** From the call to the commit, ms. */
  latency: Summary;
  /** The activity's own durationMs (from before BEGIN to before COMMIT). */
  reported: Summary;
  /** Round trips per sweep (BEGIN and COMMIT included). */
  statementsPerSweep: number;
  /** Nodes each sweep turned unreachable (must equal agedPerSweep). */
  unreachable: number[];
  disconnected: number;
  lost: number;
}

interface Plan {
  nodes: number;
  executionMs: number;
  planningMs: number;
  /** One line per plan node, indented: type, relation or index, rows. */
  lines: string[];
  seqScanOnNodes: boolean;
  indexes: string[];
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const loadBefore = loadavg().map((x) => round(x));
  log(
    `${NAME}: ${options.baselineNodes} then ${options.nodes} nodes, ${options.iterations} sweeps per scenario ` +
      `(at most ${options.budgetSeconds} s each, at least 5)`,
  );
  const services = await startBenchDatabase(teardown, log);
  log(`postgres: ${services.postgres.source} (${services.postgres.database}); no Temporal`);

  // The sweep's pool: one connection, as the worker's activity runs one sweep at a time; every
  // statement counted, the candidate query kept for EXPLAIN.
  let statements = 0;
  let candidateQuery: { text: string; params: unknown[] } | null = null;
  const sql = postgres(services.databaseUrl, {
    max: 2,
    onnotice: () => {},
    debug: (_connection, query, params) => {
      statements++;
      if (query.includes('skip locked')) candidateQuery = { text: query, params: [...params] };
    },
  });
  teardown.add('close the sweep pool', () => sql.end({ timeout: 5 }));
  const db = drizzle(sql, { schema });
  const admin = postgres(services.databaseUrl, { max: 1, onnotice: () => {} });
  teardown.add('close the setup connection', () => admin.end({ timeout: 5 }));
  const activities = createLivenessActivities(db);

  await admin`insert into pools ${admin(
    POOLS.map((p) => ({ id: p.id, kind: p.kind, site_id: 'fra1', tenant_id: 'bench', policy: p.policy })),
  )}`;
  const ids: string[] = [];
  const addNodes = async (count: number) => {
    const started = performance.now();
    const poolOf = (i: number) => {
      const x = (i % 100) / 100;
      let acc = 0;
      for (const p of POOLS) if (x < (acc += p.share)) return p.id;
      return POOLS[0]!.id;
    };
    for (let done = 0; done < count; done += 2000) {
      const batch = Array.from({ length: Math.min(2000, count - done) }, (_, j) => {
        const i = ids.length + done + j;
        return { id: newId('node'), i };
      });
      await db.insert(nodes).values(
        batch.map(({ id, i }) => ({
          id,
          poolId: poolOf(i),
          tenantId: 'bench',
          siteId: 'fra1',
          hostname: `bench-${String(i).padStart(6, '0')}`,
          provisionState: 'adopted' as const,
          connectivity: 'connected' as const,
          liveness: 'alive' as const,
          lastSeenAt: new Date(),
        })),
      );
      await db.insert(nodeCertificates).values(
        batch.map(({ id }) => ({
          serial: randomBytes(16).toString('hex'),
          nodeId: id,
          publicKey: `bench-key-${id}`,
          identityGeneration: 1,
          issuedAt: new Date(Date.now() - 86_400_000),
          expiresAt: new Date(Date.now() + 365 * 86_400_000),
        })),
      );
      ids.push(...batch.map((b) => b.id));
    }
    await admin`vacuum analyze nodes`;
    await admin`vacuum analyze node_certificates`;
    await admin`analyze pools`;
    log(
      `${count} nodes added (${ids.length} in all) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  };

  // ── sweeps ─────────────────────────────────────────────────────────────────────────────────
  /** Puts nodes back as a fresh heartbeat would find them, and the controller as 5 s ago. */
  const reset = async (changed: string[]) => {
    if (changed.length > 0) {
      await admin`
        update nodes set liveness = 'alive', connectivity = 'connected', last_seen_at = now(),
          unreachable_since = null, conditions = '[]'::jsonb,
          no_schedule_reasons = array_remove(no_schedule_reasons, 'unreachable')
        where id = any(${changed})`;
    }
    await admin`
      insert into controller_state (key, at) values ('liveness.last-sweep', now() - interval '5 seconds')
      on conflict (key) do update set at = excluded.at`;
    await admin`delete from controller_state where key = 'liveness.grace-until'`;
  };
  /** Every alive node seen now (what the heartbeat flush does every 15 s). */
  const refreshAll = () => admin`update nodes set last_seen_at = now() where liveness = 'alive'`;

  const runScenario = async (scenario: Scenario, size: number): Promise<ScenarioRun> => {
    const pool = ids.slice(0, size);
    const batchSize = Math.round(size * scenario.aged);
    await refreshAll();
    await admin`vacuum analyze nodes`;
    let refreshedAt = performance.now();
    const latencies: number[] = [];
    const reported: number[] = [];
    const unreachable: number[] = [];
    let disconnected = 0;
    let lost = 0;
    let counted = 0;
    let previous: string[] = [];
    const started = performance.now();
    for (let k = 0; k < options.iterations; k++) {
      if (k >= 5 && performance.now() - started > options.budgetSeconds * 1000) break;
      await reset(previous);
      if (performance.now() - refreshedAt > 10_000) {
        await refreshAll();
        refreshedAt = performance.now();
      }
      const offset = (k * batchSize) % size;
      const batch = [
        ...pool.slice(offset, offset + batchSize),
        ...pool.slice(0, Math.max(0, offset + batchSize - size)),
      ];
      if (batch.length > 0) {
        await admin`update nodes set last_seen_at = now() - interval '60 seconds' where id = any(${batch})`;
      }
      const before = statements;
      const t0 = performance.now();
      const result: SweepResult = await activities.sweepLiveness(DEFAULT_LIVENESS);
      latencies.push(performance.now() - t0);
      counted += statements - before;
      reported.push(result.durationMs);
      if (result.graceUntil) throw new Error(`the sweep entered an outage grace (${result.graceUntil})`);
      unreachable.push(result.unreachable);
      disconnected += result.disconnected;
      lost += result.lost;
      previous = batch;
    }
    await reset(previous);
    return {
      scenario: scenario.name,
      nodes: size,
      agedPerSweep: batchSize,
      sweeps: latencies.length,
      latency: summarize(latencies),
      reported: summarize(reported),
      statementsPerSweep: round(counted / latencies.length, 1),
      unreachable,
      disconnected,
      lost,
    };
  };

  /** The candidate query of the last sweep, under EXPLAIN ANALYZE, rolled back. */
  const explain = async (size: number): Promise<Plan> => {
    const pool = ids.slice(0, size);
    const batch = pool.slice(0, Math.round(size * 0.01));
    await reset([]);
    await refreshAll();
    await admin`update nodes set last_seen_at = now() - interval '60 seconds' where id = any(${batch})`;
    candidateQuery = null;
    // A sweep to capture the query with its parameters; then undo what it did.
    await activities.sweepLiveness(DEFAULT_LIVENESS);
    const query = candidateQuery as { text: string; params: unknown[] } | null;
    if (!query) throw new Error('the sweep ran no candidate query');
    await reset(batch);
    await admin`update nodes set last_seen_at = now() - interval '60 seconds' where id = any(${batch})`;
    let rows: unknown = null;
    try {
      await admin.begin(async (tx) => {
        const out = await tx.unsafe(
          `explain (analyze, buffers, format json) ${query.text}`,
          query.params as postgres.ParameterOrJSON<never>[],
        );
        throw new Rollback(out);
      });
    } catch (error) {
      if (!(error instanceof Rollback)) throw error;
      rows = error.rows;
    }
    await reset(batch);
    return summarizePlan(size, rows as unknown as { 'QUERY PLAN': PlanJson[] }[]);
  };

  const sizes = [options.baselineNodes, options.nodes];
  const runs: ScenarioRun[] = [];
  const plans: Plan[] = [];
  for (const size of sizes) {
    await addNodes(size - ids.length);
    for (const scenario of SCENARIOS) {
      const run = await runScenario(scenario, size);
      runs.push(run);
      log(
        `${size} nodes, ${scenario.name}: ${run.sweeps} sweeps, p50 ${run.latency.p50} ms, ` +
          `p99 ${run.latency.p99} ms, max ${run.latency.max} ms, ${run.statementsPerSweep} statements each`,
      );
    }
    plans.push(await explain(size));
  }

  const result = report({ options, services, loadBefore, runs, plans });
  const path = writeResult(NAME, result);
  console.log(`\nwrote ${path}`);
  const correct = runs.every((r) => r.unreachable.every((n) => n === r.agedPerSweep) && r.lost === 0);
  return correct ? 0 : 1;
}

interface PlanJson {
  Plan: PlanNode;
  'Planning Time': number;
  'Execution Time': number;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Actual Total Time'?: number;
  'Rows Removed by Filter'?: number;
  'Parent Relationship'?: string;
  'Subplan Name'?: string;
  Plans?: PlanNode[];
}

/** Ends a transaction with a rollback, carrying out what it read. */
class Rollback {
  constructor(readonly rows: unknown) {}
}

function summarizePlan(nodeCount: number, rows: { 'QUERY PLAN': PlanJson[] }[]): Plan {
  const plan = rows[0]!['QUERY PLAN'][0]!;
  const lines: string[] = [];
  const indexes: string[] = [];
  let seqScanOnNodes = false;
  const walk = (node: PlanNode, depth: number) => {
    const on = node['Relation Name'] ? ` on ${node['Relation Name']} ${node.Alias ?? ''}`.trimEnd() : '';
    const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    if (node['Index Name']) indexes.push(node['Index Name']);
    if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'nodes') seqScanOnNodes = true;
    const removed = node['Rows Removed by Filter'] ? `, ${node['Rows Removed by Filter']} filtered out` : '';
    const sub = node['Subplan Name'] ? ` [${node['Subplan Name']}]` : '';
    lines.push(
      `${'  '.repeat(depth)}${node['Node Type']}${on}${index}${sub}: ${node['Actual Rows']} rows × ` +
        `${node['Actual Loops']} loops${removed}, ${round(node['Actual Total Time'] ?? NaN, 3)} ms`,
    );
    for (const child of node.Plans ?? []) walk(child, depth + 1);
  };
  walk(plan.Plan, 0);
  return {
    nodes: nodeCount,
    executionMs: round(plan['Execution Time'], 3),
    planningMs: round(plan['Planning Time'], 3),
    lines,
    seqScanOnNodes,
    indexes: [...new Set(indexes)],
  };
}

function report(input: {
  options: Options;
  services: Awaited<ReturnType<typeof startBenchDatabase>>;
  loadBefore: number[];
  runs: ScenarioRun[];
  plans: Plan[];
}) {
  const { options, runs, plans } = input;
  const environ = environment();
  const at = (size: number, name: string) => runs.find((r) => r.nodes === size && r.scenario === name)!;
  const scenarios = SCENARIOS.map((s) => {
    const big = at(options.nodes, s.name);
    const small = at(options.baselineNodes, s.name);
    return {
      scenario: s.name,
      ratioP50: round(big.latency.p50 / small.latency.p50, 2),
      ratioP99: round(big.latency.p99 / small.latency.p99, 2),
      goalMet: big.latency.p99 <= GOAL_MS,
      correct:
        big.unreachable.every((n) => n === big.agedPerSweep) &&
        small.unreachable.every((n) => n === small.agedPerSweep),
    };
  });
  const figures = sweepFigures(options, at);
  const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
  const lines = [
    '',
    `${NAME}: ${options.baselineNodes} and ${options.nodes} nodes (pools: ${POOLS.map(
      (p) => `${p.id} ${p.kind} ${Math.round(p.share * 100)}%`,
    ).join(', ')}); up to ${options.iterations} sweeps per scenario; DEFAULT_LIVENESS (lease ` +
      `${DEFAULT_LIVENESS.leaseMs / 1000} s, session ${DEFAULT_LIVENESS.sessionTimeoutMs / 1000} s)`,
    `postgres ${input.services.postgres.source}; ${environ.cpus} CPUs, load ${input.loadBefore.join(' ')} before, ` +
      `${environ.loadavg.join(' ')} after`,
    '',
    formatTable(
      [
        'nodes',
        'scenario',
        'aged/sweep',
        'sweeps',
        'p50',
        'p90',
        'p99',
        'max',
        'statements',
        'unreachable/sweep',
      ],
      runs.map((r) => [
        r.nodes,
        r.scenario,
        r.agedPerSweep,
        r.sweeps,
        r.latency.p50,
        r.latency.p90,
        r.latency.p99,
        r.latency.max,
        r.statementsPerSweep,
        [...new Set(r.unreachable)].join(' '),
      ]),
    ),
    '(ms, from the call to the commit; statements: round trips to Postgres per sweep, BEGIN and COMMIT included)',
    '',
    formatTable(
      [
        'scenario',
        `p50 ${options.nodes}/${options.baselineNodes}`,
        'p99 ratio',
        `p99 ≤ ${GOAL_MS} ms at ${options.nodes}`,
        'counts right',
      ],
      scenarios.map((s) => [s.scenario, `${s.ratioP50}×`, `${s.ratioP99}×`, yes(s.goalMet), yes(s.correct)]),
    ),
  ];
  for (const plan of plans) {
    lines.push(
      '',
      `candidate query at ${plan.nodes} nodes, 1% aged (EXPLAIN ANALYZE): ${plan.executionMs} ms execution, ` +
        `${plan.planningMs} ms planning; ${plan.seqScanOnNodes ? 'SEQUENTIAL SCAN of nodes' : 'no sequential scan of nodes'}` +
        `${plan.indexes.length ? `; indexes: ${plan.indexes.join(', ')}` : ''}`,
      ...plan.lines.map((l) => `  ${l}`),
    );
  }
  console.log(lines.join('\n'));
  return {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    goals: { p99Ms: GOAL_MS, atNodes: options.nodes, massAging: MASS_AGING, steady: STEADY },
    figures,
    settings: DEFAULT_LIVENESS,
    pools: POOLS,
    environment: { ...environ, loadavgBefore: input.loadBefore },
    services: input.services,
    runs,
    scenarios,
    plans,
  };
}

/**
 * The issue's two rows: the 10% sweep at the size nearest 10,000 and the steady sweep at the
 * larger size, each by its p99; a size other than the goal's is named in the row.
 */
function sweepFigures(options: Options, at: (size: number, name: string) => ScenarioRun): Figure[] {
  const row = (run: ScenarioRun, goal: { nodes: number; ms: number }, what: string): Figure => {
    const size =
      run.nodes === goal.nodes
        ? `${run.nodes.toLocaleString('en-US')} nodes`
        : `${run.nodes.toLocaleString('en-US')} nodes (the goal is at ${goal.nodes.toLocaleString('en-US')})`;
    return {
      figure: `liveness sweep, ${what}, at ${size}: p99 of ${run.sweeps}`,
      goal: `≤ ${goal.ms} ms`,
      value: `${run.latency.p99} ms (p50 ${run.latency.p50} ms)`,
      baseline: '—',
      ratio: null,
      met: run.latency.p99 <= goal.ms,
    };
  };
  const sizes = [options.baselineNodes, options.nodes];
  const nearest = sizes.reduce((a, b) =>
    Math.abs(b - MASS_AGING.nodes) < Math.abs(a - MASS_AGING.nodes) ? b : a,
  );
  return [
    row(at(nearest, '10%'), MASS_AGING, '10% of the nodes aged'),
    row(at(options.nodes, 'steady'), STEADY, 'nothing to age'),
  ];
}
