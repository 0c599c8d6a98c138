import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import proto from '@temporalio/proto';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { createActivities, type Activities } from './activities';
import { loadConfig, type Config } from './config';
import { startDispatcher } from './dispatch/dispatcher';
import { clusterCounts } from './db/cluster-counts';
import { createDb, postgresLinkSummary, type Db } from './db/client';
import { schemaAllowsStart } from './db/schema-version';
import { causeChain } from './domain/errors';
import { createLogger, silentLogger, type Logger } from './observability/log';
import { createWorkerMetrics, type WorkerMetrics } from './observability/metrics';
import { coreMetricsTelemetry, serveWorkerMetrics } from './observability/metrics-server';
import { requestIdActivityInterceptor } from './observability/request-id-activity';
import { clientInterceptors } from './observability/temporal-interceptors';
import { temporalLogger } from './observability/temporal-logger';
import {
  activityTracing,
  startTracing,
  tracesEndpointOf,
  workflowSpanSinks,
  workflowTracingModules,
  type Tracing,
} from './observability/tracing';
import { freePort } from './scripts/services/process';
import { temporalConnection } from './temporal-connection';
import { ensureLivenessSweep } from './workflows/liveness-client';
import { SEARCH_ATTRIBUTE_KEYS } from './workflows/search-attributes';
import { bundleInChildProcess, type BundleSources } from './workflow-bundle';

const workflowsPath = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));
const requestIdInterceptorPath = fileURLToPath(
  new URL('./workflows/request-id-interceptor.ts', import.meta.url),
);

/**
 * What the workflow bundle is built from; a prebuilt bundle (`DRYDOCK_WORKFLOW_BUNDLE`, the tests')
 * must be built from the same (`bundleWorkflowCode({ ...workflowBundleSources(traced) })`).
 *
 * The workflows and the request-id interceptor are preloaded: evaluated once when the worker's V8
 * context starts and shared by every workflow run, instead of once per run into a module cache of
 * its own (Temporal's reusable context). Measured by bench worker-memory with 1,000 cached drains:
 * the workflow thread's live heap grows ~44 MB less. It is sound only while those modules (and
 * domain/, which they import) keep no state at module scope: eslint.config.js refuses top-level
 * `let`/`var` and module-level collections there. The tracing interceptors are not preloaded.
 */
export function workflowBundleSources(traced: boolean): BundleSources {
  return {
    workflowsPath,
    workflowInterceptorModules: [requestIdInterceptorPath, ...workflowTracingModules(traced)],
    preloadModules: [workflowsPath, requestIdInterceptorPath],
  };
}

/** The file names of the workflow bundles `npm run build` writes beside the compiled worker. */
export const COMPILED_BUNDLE_FILES = {
  plain: 'workflows.bundle.js',
  traced: 'workflows-traced.bundle.js',
} as const;

/**
 * The bundle the build made for this worker, when it runs compiled (dist/): the one with the
 * tracing interceptors when tracing is on, as `workflowBundleSources` would have built it.
 * From the TypeScript sources (tsx): undefined, and the workflows are bundled at start.
 */
function compiledWorkflowBundle(tracing: Tracing | null): string | undefined {
  // Compiled, this module is part of a .js file in dist/; tsx loads it as worker.ts.
  if (!import.meta.url.endsWith('.js')) return undefined;
  const file = tracing ? COMPILED_BUNDLE_FILES.traced : COMPILED_BUNDLE_FILES.plain;
  return fileURLToPath(new URL(`./${file}`, import.meta.url));
}

/**
 * Registers Drydock's search attributes in the namespace when they are missing (idempotent, also
 * when several workers start at once).
 */
export async function registerSearchAttributes(
  connection: NativeConnection,
  namespace: string,
): Promise<void> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (missing.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(
        missing.map((name) => [
          name,
          proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        ]),
      ),
    });
  } catch (error) {
    // Another worker starting at the same moment may have added them between our list and our add.
    // The server (1.29) skips an attribute already there, but two adds in flight at once can collide
    // on the namespace update it makes (answered UNAVAILABLE, "Generated search attributes mapping
    // unavailable"). What counts is whether the attributes are there now.
    if ((await missingSearchAttributes(connection, namespace)).length > 0) throw error;
  }
}

async function missingSearchAttributes(connection: NativeConnection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  return SEARCH_ATTRIBUTE_KEYS.map((key) => key.name).filter(
    (name) => !(name in (existing.customAttributes ?? {})),
  );
}

/** How long a start waits for newly added search attributes to be served (a few seconds, usually). */
const SEARCH_ATTRIBUTES_SERVED_WITHIN_MS = 60_000;

/**
 * Runs `start`, again every 500 ms while the server refuses a search attribute it has no mapping
 * for yet: attributes just added to a namespace (`registerSearchAttributes`) reach the frontend's
 * cache a little later, and a start naming one before that is refused (seen on a Temporal server
 * on SQL visibility, whose namespace was new). Any other error, or that one past
 * `SEARCH_ATTRIBUTES_SERVED_WITHIN_MS`, is thrown.
 */
export async function onceSearchAttributesServed(start: () => Promise<void>, log: Logger): Promise<void> {
  const giveUpAt = Date.now() + SEARCH_ATTRIBUTES_SERVED_WITHIN_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (!searchAttributeNotServed(error) || Date.now() > giveUpAt) throw error;
      if (attempt === 1) log.warn({ err: error }, 'search attributes not served yet; starting again');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Whether the server refused a search attribute it has no mapping for. The client wraps the
 * server's answer ("Failed to start Workflow"): its text is in the cause.
 */
const searchAttributeNotServed = (error: unknown) =>
  causeChain(error).some((e) => e.message.includes('no mapping defined for search attribute'));

export interface WorkerDeps {
  connection: NativeConnection;
  db: Db;
  namespace: string;
  taskQueue: string;
  /** The process's logger: each activity's line, under its request's scope (unset: nothing is logged). */
  log?: Logger;
  /**
   * A prebuilt bundle (tests build it once), built from `workflowBundleSources`; otherwise the
   * workflows are bundled at start, in a child process (workflow-bundle.ts).
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Crash tests only: see `dieAfterStep`. */
  fault?: FaultHook;
  /**
   * Spans for workflows and activities (observability/tracing.ts); unset: none. Workflow spans need
   * the interceptors in the bundle: a prebuilt `workflowBundle` must have been built with them.
   */
  tracing?: Tracing | null;
  /** Where the activities count what they did (the process's /metrics); unset: nothing is counted. */
  metrics?: WorkerMetrics;
  /** How many days of capacity history the liveness sweep keeps (default 30). */
  capacityHistoryDays?: number;
}

export interface FaultHook {
  killAfterStep: number;
  workflowId?: string;
}

/**
 * Fault injection, off unless DRYDOCK_FAULT_KILL_AFTER_STEP is set: the worker SIGKILLs itself the
 * moment its Nth activity (counting only DRYDOCK_FAULT_KILL_WORKFLOW_ID's, when set) has returned.
 * Each activity is one transaction, so its effect is committed and the workflow never learns it:
 * a crash test kills exactly at a step boundary instead of after a guessed sleep.
 */
function dieAfterStep(activities: Activities, fault: FaultHook, log: Logger): Activities {
  let steps = 0;
  const wrapped: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, activity] of Object.entries(activities) as [
    string,
    (...args: never[]) => Promise<unknown>,
  ][]) {
    wrapped[name] = async (...args) => {
      const result = await activity(...args);
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      if (
        (fault.workflowId === undefined || workflowId === fault.workflowId) &&
        ++steps === fault.killAfterStep
      ) {
        log.error({ step: steps, activity: name, workflowId }, 'fault hook: killing the worker');
        process.kill(process.pid, 'SIGKILL');
      }
      return result;
    };
  }
  return wrapped as Activities;
}

/** The Temporal worker: every workflow and every activity of Drydock, on one task queue. */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  await registerSearchAttributes(deps.connection, deps.namespace);
  // Activities that ask Temporal about workflows (the cancel clean-up, the reconciler) use the worker's connection.
  const tracing = deps.tracing ?? null;
  const temporal = new Client({
    connection: deps.connection,
    namespace: deps.namespace,
    interceptors: clientInterceptors(tracing),
  });
  const log = deps.log ?? silentLogger();
  const activities = createActivities({
    db: deps.db,
    temporal,
    metrics: deps.metrics,
    capacityHistoryDays: deps.capacityHistoryDays,
  });
  const workflowBundle =
    deps.workflowBundle ?? (await bundleInChildProcess(workflowBundleSources(tracing !== null)));
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowBundle,
    activities: deps.fault ? dieAfterStep(activities, deps.fault, log) : activities,
    // The bundle holds the workflow interceptors (and Temporal warns if they are given again).
    interceptors: { activity: [...activityTracing(tracing), requestIdActivityInterceptor(log)] },
    sinks: { ...workflowSpanSinks(tracing) },
    // Lets an activity finish its transaction on shutdown instead of being cut mid-way.
    shutdownGraceTime: '10 seconds',
  });
}

/**
 * Caps V8's young generation at 2 MB semi-spaces (16 MB by default) for the worker process, before
 * its workflow thread starts. Measured by bench worker-memory at 1,000 running drains: 471 MB
 * steady instead of 533 MB (idle 229 instead of 255), with drain reaction unchanged within the
 * run-to-run noise (bench drain-reaction): the extra scavenges did not show in it.
 */
export function capYoungGeneration(): void {
  setFlagsFromString('--max-semi-space-size=2');
}

async function main(config: Config, log: Logger): Promise<void> {
  capYoungGeneration();
  const temporal = temporalConnection(config);
  if (!config.DATABASE_URL || !temporal) {
    throw new Error('worker.ts needs DATABASE_URL and TEMPORAL_ADDRESS (npm start runs everything together)');
  }
  // Activities written for this build's schema must not run on an older one.
  if (!(await schemaAllowsStart(config.DATABASE_URL, log))) return;
  // Where it connects and the fingerprints of the files it read for it, never a key.
  log.info({ postgres: postgresLinkSummary(config.DATABASE_URL), temporal: temporal.summary }, 'links');
  // Core's exporter listens on loopback only: the worker's /metrics (all interfaces) relays it.
  const corePort = await freePort();
  Runtime.install({
    shutdownSignals: ['SIGINT', 'SIGTERM'],
    logger: temporalLogger(log),
    telemetryOptions: coreMetricsTelemetry(corePort),
  });
  const tracing = startTracing({ service: 'drydock-worker', endpoint: tracesEndpointOf(config) });
  const { db, sql, close } = createDb(config.DATABASE_URL);
  const metrics = createWorkerMetrics(clusterCounts(db));
  const connection = await NativeConnection.connect(temporal.options);
  const bundlePath = config.DRYDOCK_WORKFLOW_BUNDLE ?? compiledWorkflowBundle(tracing);
  const worker = await createWorker({
    connection,
    db,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    log,
    workflowBundle: bundlePath ? { codePath: bundlePath } : undefined,
    fault: config.DRYDOCK_FAULT_KILL_AFTER_STEP
      ? {
          killAfterStep: config.DRYDOCK_FAULT_KILL_AFTER_STEP,
          workflowId: config.DRYDOCK_FAULT_KILL_WORKFLOW_ID,
        }
      : undefined,
    tracing,
    metrics,
    capacityHistoryDays: config.DRYDOCK_CAPACITY_HISTORY_DAYS,
  });
  // Ready once it polls: `worker.run()` runs after the liveness controller is ensured.
  const metricsServer = await serveWorkerMetrics(metrics.registry, {
    port: config.DRYDOCK_WORKER_METRICS_PORT,
    corePort,
    ready: () => worker.getState() === 'RUNNING',
  });
  // The liveness controller runs once per namespace; starting it again finds the running one.
  const clientConnection = await Connection.connect(temporal.options);
  const client = new Client({
    connection: clientConnection,
    namespace: config.TEMPORAL_NAMESPACE,
    interceptors: clientInterceptors(tracing),
  });
  await onceSearchAttributesServed(() => ensureLivenessSweep(client, config.TEMPORAL_TASK_QUEUE), log);
  // What committed changes asked Temporal for (db/outbox.ts), delivered by this worker too.
  const dispatcher = await startDispatcher({
    db,
    sql,
    temporal: client,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    log,
    leaseMs: config.DRYDOCK_OUTBOX_LEASE_MS,
    killAt: config.DRYDOCK_FAULT_KILL_IN_DISPATCH,
  });
  log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, node: process.versions.node }, 'drydock worker running');
  await worker.run();
  await dispatcher.stop();
  await clientConnection.close();
  metricsServer.server.close();
  await connection.close();
  await close();
  await tracing?.shutdown();
}

/** The worker process as entry/worker.ts runs it: configured from the environment, exits 1 on a fatal error. */
export function runWorkerProcess(): void {
  const config = loadConfig();
  const log = createLogger({ service: 'worker', level: config.LOG_LEVEL });
  main(config, log).catch((error: unknown) => {
    log.fatal({ err: error }, 'worker stopped');
    process.exit(1);
  });
}
