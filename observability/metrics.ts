import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LIVENESS } from '../domain/node';
import { OPERATION_KINDS } from '../domain/operation';
import { metricsText } from './metrics-cluster';

/**
 * Prometheus metrics (docs/operations.md, Metrics). Each API app and each worker owns a registry
 * of its own, passed down with its other services, never prom-client's global one: a test process
 * runs several of them side by side. Every label has a bounded set of values (a route pattern,
 * never a raw path; no node or request ids).
 */

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Request latencies, from a healthz (sub-millisecond) to a long-poll held for its full minute. */
const REQUEST_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Statement and transaction latencies. */
const STATEMENT_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** How many nodes one flush writes: one agent up to a large fleet on one API process. */
const FLUSH_NODES = [1, 10, 100, 1_000, 5_000, 10_000, 50_000, 100_000];
/** A drain's wait, from its begin to drained: at once, up to a deadline of days. */
const DRAIN_WAIT_SECONDS = [0.1, 1, 10, 60, 300, 900, 3_600, 4 * 3_600, 12 * 3_600, 86_400, 7 * 86_400];

/**
 * The registry, with Node's process metrics under their standard names (`process_*`, `nodejs_*`),
 * but for `nodejs_version_info`: a scrape says nothing of the runtime's version, which tells an
 * attacker what to try (docs/security.md).
 */
function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registry.removeSingleMetric('nodejs_version_info');
  return registry;
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;

/** Where the API's long-polls wait: agents for commands, event-feed readers for events. */
export const LONG_POLL_FEEDS = ['commands', 'events'] as const;

/** The API process's metrics: requests, heartbeats and their flush, long-polls (counted at each scrape). */
export function createApiMetrics(longPolls: Record<(typeof LONG_POLL_FEEDS)[number], () => number>) {
  const registry = processRegistry();
  new Gauge({
    name: 'drydock_long_polls_waiting',
    help: 'Long-polls this API process holds open, by what they wait for (commands, events).',
    labelNames: ['feed'] as const,
    registers: [registry],
    collect() {
      for (const feed of LONG_POLL_FEEDS) this.set({ feed }, longPolls[feed]());
    },
  });
  const requests = new Histogram({
    name: 'drydock_http_request_duration_seconds',
    help: 'HTTP requests answered, by method, route pattern and status: time to the response.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_SECONDS,
    registers: [registry],
  });
  const heartbeats = new Counter({
    name: 'drydock_heartbeats_total',
    help: 'Agent heartbeats this API process accepted.',
    registers: [registry],
  });
  const flushNodes = new Histogram({
    name: 'drydock_heartbeat_flush_nodes',
    help: "Nodes whose last-seen time one heartbeat flush wrote (flushes that wrote nothing aren't counted).",
    buckets: FLUSH_NODES,
    registers: [registry],
  });
  const flushSeconds = new Histogram({
    name: 'drydock_heartbeat_flush_duration_seconds',
    help: 'Time of one heartbeat flush statement.',
    buckets: STATEMENT_SECONDS,
    registers: [registry],
  });
  return {
    registry,
    /** The text `/metrics` serves: every API process's when several share the port. */
    render: metricsText(registry),
    /** One answered request; `route` is the matched pattern (`/v1/nodes/:id`), never the path. */
    request(method: string, route: string, status: number, startedAt: number): void {
      requests.observe({ method, route, status }, (performance.now() - startedAt) / 1_000);
    },
    heartbeat(): void {
      heartbeats.inc();
    },
    flush(flush: { rows: number; durationMs: number }): void {
      flushNodes.observe(flush.rows);
      flushSeconds.observe(flush.durationMs / 1_000);
    },
  };
}

export const LIVENESS_CHANGES = ['disconnected', 'unreachable', 'lost'] as const;
export const REMEDIATION_OUTCOMES = ['succeeded', 'escalated', 'cancelled'] as const;

/** What the database-wide gauges read at each scrape (the same figure on every worker). */
export interface ClusterCounts {
  /** Running operations by kind. */
  runningOperations(): Promise<{ kind: string; count: number }[]>;
  /** Nodes (not deleted) by liveness. */
  nodesByLiveness(): Promise<{ liveness: string; count: number }[]>;
  /** Drains past their deadline waiting for a disruption-budget slot. */
  drainsWaitingForBudget(): Promise<number>;
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/**
 * The worker's metrics: what its activities did (sweeps, drains, remediations), and gauges read
 * from the database at each scrape — a count kept in one worker's memory would be wrong as soon
 * as a second worker runs, or one restarts.
 */
export function createWorkerMetrics(counts: ClusterCounts) {
  const registry = processRegistry();
  const sweepSeconds = new Histogram({
    name: 'drydock_liveness_sweep_duration_seconds',
    help: 'Time of one liveness sweep transaction.',
    buckets: STATEMENT_SECONDS,
    registers: [registry],
  });
  const sweepChanges = new Counter({
    name: 'drydock_liveness_sweep_nodes_total',
    help: 'Nodes the liveness sweep moved, by the change (disconnected, unreachable, lost).',
    labelNames: ['change'] as const,
    registers: [registry],
  });
  const drainWait = new Histogram({
    name: 'drydock_drain_wait_seconds',
    help: "A drain's wait for its node's allocations to end, from the drain's begin to drained.",
    buckets: DRAIN_WAIT_SECONDS,
    registers: [registry],
  });
  const budgetWaits = new Counter({
    name: 'drydock_drain_budget_waits_total',
    help: "Forced releases that found the pool's disruption budget full and queued for a slot.",
    registers: [registry],
  });
  const remediations = new Counter({
    name: 'drydock_remediations_total',
    help: 'Remediations ended, by outcome (succeeded, escalated, cancelled).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const stormEscalations = new Counter({
    name: 'drydock_remediation_storm_escalations_total',
    help: 'Automatic remediations escalated at once because the pool was past maxUnhealthy.',
    registers: [registry],
  });
  // Every known label value starts at 0, so a rate over the first increase is not lost.
  for (const change of LIVENESS_CHANGES) sweepChanges.inc({ change }, 0);
  for (const outcome of REMEDIATION_OUTCOMES) remediations.inc({ outcome }, 0);

  new Gauge({
    name: 'drydock_operations_running',
    help: 'Operations running in the cluster, by kind (read from the database).',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      const rows = await orNothing(counts.runningOperations());
      this.reset();
      if (!rows) return;
      for (const kind of OPERATION_KINDS) this.set({ kind }, 0);
      for (const row of rows) this.set({ kind: row.kind }, row.count);
    },
  });
  new Gauge({
    name: 'drydock_nodes',
    help: 'Nodes in the cluster (not deleted), by liveness (read from the database).',
    labelNames: ['liveness'] as const,
    registers: [registry],
    async collect() {
      const rows = await orNothing(counts.nodesByLiveness());
      this.reset();
      if (!rows) return;
      for (const liveness of LIVENESS) this.set({ liveness }, 0);
      for (const row of rows) this.set({ liveness: row.liveness }, row.count);
    },
  });
  new Gauge({
    name: 'drydock_drains_waiting_for_budget',
    help: 'Drains past their deadline waiting for a disruption-budget slot (read from the database).',
    registers: [registry],
    async collect() {
      const waiting = await orNothing(counts.drainsWaitingForBudget());
      if (waiting === undefined) this.reset();
      else this.set(waiting);
    },
  });

  return {
    registry,
    sweep(result: { disconnected: number; unreachable: number; lost: number }, seconds: number): void {
      sweepSeconds.observe(seconds);
      for (const change of LIVENESS_CHANGES) sweepChanges.inc({ change }, result[change]);
    },
    drained(waitedSeconds: number): void {
      drainWait.observe(waitedSeconds);
    },
    budgetWait(): void {
      budgetWaits.inc();
    },
    remediationEnded(outcome: (typeof REMEDIATION_OUTCOMES)[number]): void {
      remediations.inc({ outcome });
    },
    stormEscalation(): void {
      stormEscalations.inc();
      remediations.inc({ outcome: 'escalated' });
    },
  };
}

/** A gauge the database cannot read right now has no series (absent), rather than failing the scrape. */
async function orNothing<T>(reading: Promise<T>): Promise<T | undefined> {
  return reading.catch(() => undefined);
}
