/**
 * rolling-maintenance: how long a rolling maintenance of a pool takes (docs/lifecycle/maintenance.md,
 * "Rolling maintenance"), against its ideal: ceil(N / maxConcurrent) × the time one node's
 * maintenance takes alone, measured in the same run (goal: at most 1.2× the ideal, for 200 nodes
 * at most 20 at once).
 *
 * The API and the worker (with the outbox's dispatcher) run as processes of their own, as in
 * production (bench/support/api-process.ts, worker-process.ts); N + B simulated agents
 * (agent/simulator.ts) run in this process, joined with a token into two pools: `bench-roll` (N
 * nodes) and `bench-single` (B nodes, the baseline). Every step takes a fixed time: the plan is
 * drain → run:driver-upgrade (the action takes `--driver-ms`) → reboot (the machine away for
 * `--reboot-ms`, back on a new boot) → verify (healthy for `--healthy-after`) → uncordon, so a node
 * takes about their sum, and any more is the control plane's.
 *
 * The baseline: B nodes of `bench-single`, maintained one after another, each alone
 * (`POST /v1/nodes/{id}/maintenances`), its time the operation's createdAt → completedAt (the
 * database's clock); the median is the per-node time. Then one `POST /v1/pools/bench-roll/maintenance`
 * with maxConcurrent M; its wall time is the rolling operation's createdAt → completedAt. Reported:
 * wall, ideal, ratio, the worker's peak RSS (VmRSS sampled every 250 ms through the rolling
 * maintenance), the history events of the parent workflow (every run of it), and the most node
 * maintenances recorded and not yet ended at once (must be ≤ M). Where the time goes: each node's
 * time under load against alone, step by step; how long a freed slot stays empty before the next
 * node's maintenance is recorded; the parent's start and end; the CPU each process used.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createDb } from '../db/client';
import { pools } from '../db/schema';
import { hashSecret } from '../domain/secrets';
import { createSimulator, type SimulatedMachine } from '../agent/simulator';
import type { SimulatedAction } from '../agent/simulated-actions';
import { maintenanceWorkflowId, poolMaintenanceWorkflowId } from '../workflows/definitions';
import { startApiProcess } from './support/api-process';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { cpuBetween, cpuMark, findPostmaster } from './support/cpu';
import { apiCaller } from './support/drains';
import { paced, sleep, until } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startServices } from './support/services';
import { median, percentile, round } from './support/stats';
import type { Teardown } from './support/teardown';
import { connectTemporal, eventMs, type HistoryEvent } from './support/temporal';
import { devServerPid, startWorkerProcess } from './support/worker-process';

const NAME = 'rolling-maintenance';
/** Wall time of the rolling maintenance, at most this many times ceil(N/M) × one node alone. */
const GOAL_RATIO = 1.2;
const SAMPLE_EVERY_MS = 250;
const API_CONNECTIONS = 10;
const ROLL_POOL = 'bench-roll';
const SINGLE_POOL = 'bench-single';

const PLAN = [
  { kind: 'drain' },
  { kind: 'run', action: 'driver-upgrade' },
  { kind: 'reboot' },
  { kind: 'verify' },
  { kind: 'uncordon' },
];
const STEP_NAMES = ['drain', 'run:driver-upgrade', 'reboot', 'verify', 'uncordon'];

const usage = [
  '  --nodes N            nodes of the rolling maintenance (default 200, max 1000)',
  '  --max-concurrent M   its maxConcurrent (default 20)',
  '  --baseline-runs B    nodes maintained one after another, each alone, for the per-node time',
  '                       (the median; default 3)',
  '  --driver-ms T        how long run:driver-upgrade takes on a node (default 2000)',
  '  --reboot-ms R        how long a reboot keeps a node away (default 1000)',
  '  --healthy-after H    verify: seconds every probe must hold healthy (default 2)',
  "  --heartbeat-ms P     each simulated agent's heartbeat interval (default 10000, the agent's)",
].join('\n');

interface Options {
  nodes: number;
  maxConcurrent: number;
  baselineRuns: number;
  driverMs: number;
  rebootMs: number;
  healthyAfter: number;
  heartbeatMs: number;
}

function parseOptions(args: string[]): Options {
  const values = optionValues(args, {
    nodes: { type: 'string' },
    'max-concurrent': { type: 'string' },
    'baseline-runs': { type: 'string' },
    'driver-ms': { type: 'string' },
    'reboot-ms': { type: 'string' },
    'healthy-after': { type: 'string' },
    'heartbeat-ms': { type: 'string' },
  });
  return {
    nodes: intOption('nodes', values.nodes, 200, 1, 1000),
    maxConcurrent: intOption('max-concurrent', values['max-concurrent'], 20, 1, 200),
    baselineRuns: intOption('baseline-runs', values['baseline-runs'], 3, 1, 20),
    driverMs: intOption('driver-ms', values['driver-ms'], 2000, 0, 600_000),
    rebootMs: intOption('reboot-ms', values['reboot-ms'], 1000, 0, 600_000),
    healthyAfter: intOption('healthy-after', values['healthy-after'], 2, 0, 600),
    heartbeatMs: intOption('heartbeat-ms', values['heartbeat-ms'], 10_000, 100, 60_000),
  };
}

export default defineBenchmark({
  summary: 'wall time of a rolling maintenance (200 nodes, 20 at once) vs ceil(200/20) × one node alone',
  usage,
  quick: ['--nodes', '100', '--max-concurrent', '20', '--baseline-runs', '2'],
  run: measured(parseOptions, measure),
});

/** One operation as the database has it. */
interface OperationRow {
  id: string;
  node_id: string | null;
  status: string;
  /** Epoch ms, on the database's clock. */
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  waiting_for: { steps?: { step: string; startedAt: string | null; endedAt: string | null }[] } | null;
}

/** Where one node's maintenance spent its time, ms: each step, and before and after them. */
interface NodeTimes {
  total: number;
  /** createdAt → startedAt: the dispatcher starting its workflow and the workflow's first look. */
  pickup: number;
  /** startedAt → the first step's start. */
  toFirstStep: number;
  steps: number[];
  /** The gaps between one step's end and the next one's start, summed. */
  between: number;
  /** The last step's end → completedAt. */
  tail: number;
}

/** A row's timestamps (a Date or an ISO string, as the pool's types hand them over) as epoch ms. */
function inMs(row: Record<string, unknown>): OperationRow {
  const ms = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).getTime());
  return {
    ...(row as unknown as OperationRow),
    created_at: ms(row.created_at)!,
    started_at: ms(row.started_at),
    completed_at: ms(row.completed_at),
    waiting_for: typeof row.waiting_for === 'string' ? JSON.parse(row.waiting_for) : row.waiting_for,
  } as OperationRow;
}

function nodeTimes(op: OperationRow): NodeTimes {
  const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : NaN);
  const steps = op.waiting_for?.steps ?? [];
  const created = op.created_at;
  const started = op.started_at ?? NaN;
  const completed = op.completed_at ?? NaN;
  let between = 0;
  for (let i = 1; i < steps.length; i++) between += ms(steps[i]!.startedAt) - ms(steps[i - 1]!.endedAt);
  return {
    total: completed - created,
    pickup: started - created,
    toFirstStep: ms(steps[0]?.startedAt) - started,
    steps: steps.map((s) => ms(s.endedAt) - ms(s.startedAt)),
    between,
    tail: completed - ms(steps.at(-1)?.endedAt),
  };
}

/**
 * A workflow's history split: how long its workflow tasks waited in the task queue for the worker
 * (scheduled → started), and how long the worker held them (started → completed: the workflow code
 * and the local activities of its looks, each a transaction), summed, ms.
 */
function taskTimes(events: HistoryEvent[]): { queued: number; worked: number; tasks: number } {
  const at = new Map<number, number>();
  let queued = 0;
  let worked = 0;
  let tasks = 0;
  for (const e of events) {
    const id = Number(e.eventId);
    const time = eventMs(e.eventTime);
    if (e.workflowTaskScheduledEventAttributes) at.set(id, time);
    const started = e.workflowTaskStartedEventAttributes;
    if (started) {
      at.set(id, time);
      queued += time - (at.get(Number(started.scheduledEventId)) ?? time);
    }
    const completed = e.workflowTaskCompletedEventAttributes;
    if (completed) {
      worked += time - (at.get(Number(completed.startedEventId)) ?? time);
      tasks++;
    }
  }
  return { queued, worked, tasks };
}

/**
 * A run's history, 100 events a page: the parent's looks record every node's progress, and one
 * default page of them is more than gRPC's 4 MB message limit lets the client receive.
 */
async function historyInPages(client: Client, workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId, runId },
      maximumPageSize: 100,
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return events;
}

const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
const mb = (bytes: number) => round(bytes / 1024 / 1024, 1);
const s = (ms: number) => round(ms / 1000, 2);

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const { nodes: n, maxConcurrent: m, baselineRuns: b } = options;
  const waves = Math.ceil(n / m);
  const loadBefore = environment().loadavg;
  log(`${NAME}: ${n} nodes, at most ${m} at once (${waves} waves); baseline ${b} nodes alone`);
  const services = await startServices(teardown, log);
  const { client } = await connectTemporal(services.temporal.address, teardown);
  const setup = createDb(services.databaseUrl, { max: 2 });
  teardown.add('close the setup pool', () => setup.close());
  const suffix = `${process.pid}-${randomBytes(3).toString('hex')}`;
  const taskQueue = `bench-rolling-${suffix}`;
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const [api, worker] = await Promise.all([
    startApiProcess(
      {
        databaseUrl: services.databaseUrl,
        temporalAddress: services.temporal.address,
        taskQueue,
        bootstrapKeyHash: hashSecret(operatorKey),
        connections: API_CONNECTIONS,
      },
      teardown,
    ),
    startWorkerProcess(
      { databaseUrl: services.databaseUrl, temporalAddress: services.temporal.address, taskQueue },
      teardown,
    ),
  ]);
  const temporalPid = devServerPid(Number(services.temporal.address.split(':').at(-1))) ?? undefined;
  const postmaster = await findPostmaster(setup.sql);
  log(`API process ${api.pid}; worker process ${worker.pid}; temporal ${temporalPid ?? 'not ours'}`);
  const call = apiCaller(api.port, operatorKey);

  // ── the pools, their tokens, the simulated fleet ────────────────────────────────────────────
  await setup.db.insert(pools).values(
    [ROLL_POOL, SINGLE_POOL].map((id) => ({
      id,
      kind: 'provider' as const,
      siteId: 'fra1',
      tenantId: 'bench',
      policy: { maxUnavailable: m },
    })),
  );
  const tokenOf = async (poolId: string) => {
    const reply = await call('POST', '/v1/tokens', { poolId, ttl: '1h', maxUses: 0 });
    if (reply.status !== 201) throw new Error(`token: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body.secret as string;
  };
  const [rollToken, singleToken] = [await tokenOf(ROLL_POOL), await tokenOf(SINGLE_POOL)];
  const machines: SimulatedMachine[] = [
    ...Array.from({ length: b }, (_, i) => ({
      hostname: `single-${String(i + 1).padStart(2, '0')}`,
      token: singleToken,
    })),
    ...Array.from({ length: n }, (_, i) => ({
      hostname: `roll-${String(i + 1).padStart(4, '0')}`,
      token: rollToken,
    })),
  ];
  const actions: Record<string, SimulatedAction> = {
    'driver-upgrade': { stdout: 'driver 570 installed (simulated)\n', takesMs: options.driverMs },
    reboot: { restarts: true },
  };
  const joinedFrom = Date.now();
  const simulator = await createSimulator({
    api: `http://127.0.0.1:${api.port}`,
    machines,
    heartbeatEveryMs: options.heartbeatMs,
    actions,
    rebootMs: options.rebootMs,
  });
  teardown.add('stop the simulated agents', () => simulator.close());
  await until(
    'every simulated node adopted with its boot said',
    async () => {
      const [row] = await setup.sql<{ ready: number }[]>`
        select count(*)::int as ready from nodes
        where pool_id in (${ROLL_POOL}, ${SINGLE_POOL}) and provision_state = 'adopted'
          and boot_id is not null and connectivity = 'connected'`;
      return row!.ready === n + b;
    },
    120_000,
    250,
  );
  const singleNodes = simulator.agents.slice(0, b).map((a) => a.nodeId);
  log(`${n + b} simulated agents joined and connected in ${s(Date.now() - joinedFrom)} s`);

  // One RSS sampler for the whole run; each window takes the samples between two marks.
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
  const between = (from: number, to: number) => samples.filter((x) => x.at >= from && x.at <= to);
  const idleFrom = Date.now();
  await sleep(3000);
  const idleRss = median(between(idleFrom, Date.now()).map((x) => x.rss));

  const body = {
    steps: PLAN,
    reason: 'bench: driver 570',
    healthyAfter: `${options.healthyAfter}s`,
  };
  const readOperation = async (id: string) => {
    const [row] = await setup.sql`
      select id, node_id, status, created_at, started_at, completed_at, waiting_for
      from operations where id = ${id}`;
    return inMs(row!);
  };
  const ended = (row: OperationRow) => ['succeeded', 'failed', 'cancelled'].includes(row.status);
  const timeoutMs = 120_000 + waves * (options.driverMs + options.rebootMs + options.healthyAfter * 1000) * 5;

  // ── the baseline: one node at a time, each alone ─────────────────────────────────────────────
  const alone: OperationRow[] = [];
  for (const nodeId of singleNodes) {
    const reply = await call('POST', `/v1/nodes/${nodeId}/maintenances`, body);
    if (reply.status !== 202) throw new Error(`maintenance: ${reply.status} ${JSON.stringify(reply.body)}`);
    const id = reply.body.operation.id as string;
    let row = await readOperation(id);
    await until(
      `the maintenance of ${nodeId} alone`,
      async () => ended((row = await readOperation(id))),
      timeoutMs,
      50,
    );
    if (row.status !== 'succeeded') throw new Error(`the maintenance of ${nodeId} alone ended ${row.status}`);
    alone.push(row);
    log(`alone: ${nodeId} maintained in ${s(nodeTimes(row).total)} s`);
  }
  const aloneTimes = alone.map(nodeTimes);
  const perNodeMs = median(aloneTimes.map((t) => t.total));
  const idealMs = waves * perNodeMs;

  // ── the rolling maintenance ──────────────────────────────────────────────────────────────────
  const cpuStart = cpuMark({ api: api.pid, worker: worker.pid, temporal: temporalPid }, postmaster);
  const rollFrom = Date.now();
  const reply = await call('POST', `/v1/pools/${ROLL_POOL}/maintenance`, {
    ...body,
    maxConcurrent: m,
    maxFailures: 1,
  });
  if (reply.status !== 202)
    throw new Error(`pool maintenance: ${reply.status} ${JSON.stringify(reply.body)}`);
  const parentId = reply.body.operation.id as string;
  let parent = await readOperation(parentId);
  let lastSaid = Date.now();
  await until(
    'the rolling maintenance',
    async () => {
      parent = await readOperation(parentId);
      if (Date.now() - lastSaid > 10_000) {
        lastSaid = Date.now();
        const [c] = await setup.sql<{ done: number; open: number }[]>`
          select count(*) filter (where completed_at is not null)::int as done,
                 count(*) filter (where completed_at is null)::int as open
          from operations where parent_operation_id = ${parentId}`;
        log(`rolling: ${c!.done} of ${n} done, ${c!.open} running`);
      }
      return ended(parent);
    },
    timeoutMs,
    100,
  );
  const rollTo = Date.now();
  const cpu = cpuBetween(
    cpuStart,
    cpuMark({ api: api.pid, worker: worker.pid, temporal: temporalPid }, postmaster),
    'bench+simulator',
  );
  const wallMs = parent.completed_at! - parent.created_at;
  const rollRss = between(rollFrom, rollTo).map((x) => x.rss);
  const peakRss = Math.max(...rollRss);
  log(`rolling maintenance ${parent.status} in ${s(wallMs)} s`);

  // ── what it did: the children, the parent's history ──────────────────────────────────────────
  const children = (
    await setup.sql`
      select id, node_id, status, created_at, started_at, completed_at, waiting_for
      from operations where parent_operation_id = ${parentId} order by created_at`
  ).map(inMs);
  const succeeded = children.filter((c) => c.status === 'succeeded').length;
  const edges = children.flatMap((c): [number, number][] => [
    [c.created_at, 1],
    [c.completed_at ?? rollTo, -1],
  ]);
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let mostAtOnce = 0;
  for (const [, step] of edges) mostAtOnce = Math.max(mostAtOnce, (open += step));
  // A slot freed by the j-th node to end is taken by the (m + j)-th node to be recorded.
  const starts = children.map((c) => c.created_at).sort((x, y) => x - y);
  const ends = children.map((c) => c.completed_at ?? rollTo).sort((x, y) => x - y);
  const refill = starts.slice(m).map((start, j) => start - ends[j]!);
  const firstChildMs = starts[0]! - parent.created_at;
  const lastEndToParentMs = parent.completed_at! - ends.at(-1)!;

  const runs: { runId: string; events: number; bytes: number | null }[] = [];
  for await (const execution of client.workflow.list({
    query: `WorkflowId = "${poolMaintenanceWorkflowId(ROLL_POOL)}"`,
  })) {
    // Visibility's figures lag a closed run's; its description is the history's own.
    const described = await client.workflow.getHandle(execution.workflowId, execution.runId).describe();
    runs.push({
      runId: execution.runId,
      events: described.historyLength,
      bytes: described.historySize ?? null,
    });
  }
  const parentEvents = runs.reduce((sum, x) => sum + x.events, 0);
  const parentBytes = runs.reduce((sum, x) => sum + (x.bytes ?? 0), 0);
  const parentTasks = { queued: 0, worked: 0, tasks: 0 };
  for (const run of runs) {
    const split = taskTimes(await historyInPages(client, poolMaintenanceWorkflowId(ROLL_POOL), run.runId));
    parentTasks.queued += split.queued;
    parentTasks.worked += split.worked;
    parentTasks.tasks += split.tasks;
  }
  // Each node maintenance's workflow tasks, rolling and alone.
  const childEvents: number[] = [];
  const childTasks: ReturnType<typeof taskTimes>[] = [];
  await paced(children, { concurrency: 8 }, async (c) => {
    const history = await client.workflow.getHandle(maintenanceWorkflowId(c.node_id!)).fetchHistory();
    childEvents.push(history.events?.length ?? 0);
    childTasks.push(taskTimes(history.events ?? []));
  });
  const aloneTasks: ReturnType<typeof taskTimes>[] = [];
  for (const nodeId of singleNodes) {
    const history = await client.workflow.getHandle(maintenanceWorkflowId(nodeId)).fetchHistory();
    aloneTasks.push(taskTimes(history.events ?? []));
  }

  const rollTimes = children.filter((c) => c.completed_at).map(nodeTimes);
  const ratio = round(wallMs / idealMs, 2);
  const ok = parent.status === 'succeeded' && succeeded === n && mostAtOnce <= m;
  const met = ok && ratio <= GOAL_RATIO;

  // ── the report ───────────────────────────────────────────────────────────────────────────────
  const dist = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    return { p50: median(sorted), p90: percentile(sorted, 90), max: sorted.at(-1)! };
  };
  const parts: [string, (t: NodeTimes) => number][] = [
    ['pickup (recorded → a worker began)', (t) => t.pickup],
    ['began → first step', (t) => t.toFirstStep],
    ...STEP_NAMES.map((name, i): [string, (t: NodeTimes) => number] => [name, (t) => t.steps[i] ?? NaN]),
    ['between steps', (t) => t.between],
    ['last step → completed', (t) => t.tail],
    ['total', (t) => t.total],
  ];
  const breakdown = parts.map(([label, of]) => {
    const under = dist(rollTimes.map(of));
    return { label, alone: mean(aloneTimes.map(of)), mean: mean(rollTimes.map(of)), ...under };
  });
  // Each slot is a chain: its first node, then each node that took it over when one ended.
  const slots = {
    aloneWork: (n * perNodeMs) / m,
    extraWork: (rollTimes.reduce((sum, x) => sum + x.total, 0) - n * perNodeMs) / m,
    refills: refill.reduce((sum, x) => sum + x, 0) / m,
    ramp: starts.slice(0, m).reduce((sum, x) => sum + (x - parent.created_at), 0) / m,
    drainDown: ends.slice(-m).reduce((sum, x) => sum + (parent.completed_at! - x), 0) / m,
  };
  const refillDist = refill.length ? dist(refill) : { p50: NaN, p90: NaN, max: NaN };
  const fixedMs = options.driverMs + options.rebootMs + options.healthyAfter * 1000;
  const environ = environment();
  console.log(
    [
      '',
      `${NAME}: ${n} nodes, maxConcurrent ${m}; plan ${STEP_NAMES.join(' → ')}; driver-upgrade ` +
        `${options.driverMs} ms, reboot ${options.rebootMs} ms, healthyAfter ${options.healthyAfter} s ` +
        `(${fixedMs} ms fixed per node); heartbeats every ${options.heartbeatMs} ms; postgres ` +
        `${services.postgres.source}, temporal ${services.temporal.source}; ${environ.cpus} CPUs, load ` +
        `${loadBefore.join(' ')} before, ${environ.loadavg.join(' ')} after`,
      '',
      `rolling maintenance ${parent.status}: ${succeeded} of ${n} nodes succeeded`,
      `wall time ${s(wallMs)} s; ideal ${waves} × ${s(perNodeMs)} s (one node alone, median of ${b}) = ` +
        `${s(idealMs)} s; ratio ${ratio}x (goal ≤ ${GOAL_RATIO}x)`,
      `most node maintenances at once: ${mostAtOnce} (maxConcurrent ${m})`,
      `worker RSS: idle ${mb(idleRss)} MB, peak ${mb(peakRss)} MB during the rolling maintenance`,
      `parent history: ${parentEvents} events, ${mb(parentBytes)} MB, in ${runs.length} run(s) ` +
        `(${runs.map((r) => `${r.events} events, ${r.bytes === null ? '?' : mb(r.bytes)} MB`).join('; ')}); node maintenance histories: ` +
        `median ${median(childEvents)}, max ${Math.max(...childEvents)} events`,
      '',
      'where a node’s time goes, ms (alone: mean of the baseline; rolling: mean, p50, p90, max):',
      formatTable(
        ['part', 'alone', 'rolling mean', 'p50', 'p90', 'max'],
        breakdown.map((r) => [
          r.label,
          Math.round(r.alone),
          Math.round(r.mean),
          Math.round(r.p50),
          Math.round(r.p90),
          Math.round(r.max),
        ]),
      ),
      `its workflow tasks, ms per node (mean): waiting in the task queue ${Math.round(mean(aloneTasks.map((x) => x.queued)))} alone, ` +
        `${Math.round(mean(childTasks.map((x) => x.queued)))} rolling; held by the worker (code and looks) ` +
        `${Math.round(mean(aloneTasks.map((x) => x.worked)))} alone, ${Math.round(mean(childTasks.map((x) => x.worked)))} rolling; ` +
        `${round(mean(childTasks.map((x) => x.tasks)), 1)} tasks a node`,
      `the parent's workflow tasks: ${parentTasks.tasks}, waiting in the task queue ${s(parentTasks.queued)} s and held ` +
        `by the worker ${s(parentTasks.worked)} s in all`,
      '',
      `the wall time, slot by slot (${m} slots × wall = the nodes' times + the gaps between them; each term ÷ ${m}):`,
      formatTable(
        ['part', 's of wall'],
        [
          ['nodes maintained, at the time one takes alone', s(slots.aloneWork)],
          ['nodes maintained, their extra time under the rolling maintenance', s(slots.extraWork)],
          ['a freed slot until the next node is recorded', s(slots.refills)],
          ['start: request → each of the first nodes recorded', s(slots.ramp)],
          ['end: each of the last nodes ended → the rolling maintenance completed', s(slots.drainDown)],
          ['wall', s(wallMs)],
        ],
      ),
      '',
      `request → first node maintenance recorded: ${firstChildMs} ms; last node ended → rolling ` +
        `maintenance completed: ${lastEndToParentMs} ms`,
      `a freed slot until the next node's maintenance is recorded (${refill.length} refills): p50 ` +
        `${Math.round(refillDist.p50)} ms, p90 ${Math.round(refillDist.p90)} ms, max ${Math.round(refillDist.max)} ms`,
      `wall time per wave: ${s(wallMs / waves)} s against ${s(perNodeMs)} s alone`,
      '',
      `CPU during the rolling maintenance (cores, over ${cpu.seconds} s): ` +
        Object.entries(cpu.cores)
          .map(([k, v]) => `${k} ${v ?? '—'}`)
          .join(', '),
    ].join('\n'),
  );

  const figures: Figure[] = [
    {
      figure: `rolling maintenance wall time, ${n} nodes at most ${m} at once, vs ceil(${n}/${m}) × one node alone (${fixedMs} ms of fixed steps)`,
      goal: `≤ ${GOAL_RATIO}×`,
      value: `${s(wallMs)} s`,
      baseline: `${s(idealMs)} s (${waves} × ${s(perNodeMs)} s)`,
      ratio,
      met,
    },
    {
      figure: `most node maintenances at once (maxConcurrent ${m})`,
      goal: `≤ ${m}`,
      value: String(mostAtOnce),
      baseline: '—',
      ratio: null,
      met: mostAtOnce <= m,
    },
    {
      figure: `worker peak RSS during the rolling maintenance of ${n} nodes`,
      goal: '— (reported)',
      value: `${mb(peakRss)} MB`,
      baseline: `${mb(idleRss)} MB idle`,
      ratio: round(peakRss / idleRss),
      met: true,
    },
    {
      figure: `history events of the rolling maintenance's workflow (${n} nodes)`,
      goal: '— (reported)',
      value: `${parentEvents} in ${runs.length} run(s), ${mb(parentBytes)} MB`,
      baseline: '—',
      ratio: null,
      met: true,
    },
  ];
  const path = writeResult(NAME, {
    benchmark: NAME,
    at: new Date().toISOString(),
    options,
    environment: { ...environ, loadavgBefore: loadBefore },
    services,
    outcome: parent.status,
    succeeded,
    wallMs,
    perNodeMs,
    aloneMs: aloneTimes.map((t) => t.total),
    idealMs,
    ratio,
    mostAtOnce,
    rssBytes: { idle: idleRss, peak: peakRss },
    parentHistory: { events: parentEvents, bytes: parentBytes, runs, tasks: parentTasks },
    childTasks: {
      rollingMean: {
        queued: mean(childTasks.map((x) => x.queued)),
        worked: mean(childTasks.map((x) => x.worked)),
      },
      aloneMean: {
        queued: mean(aloneTasks.map((x) => x.queued)),
        worked: mean(aloneTasks.map((x) => x.worked)),
      },
    },
    slotsMs: slots,
    childHistoryEvents: { median: median(childEvents), max: Math.max(...childEvents) },
    breakdownMs: breakdown,
    firstChildMs,
    lastEndToParentMs,
    refillMs: refillDist,
    cpu,
    figures,
  });
  console.log(`\nwrote ${path}`);
  return ok ? 0 : 1;
}
