import type { ChildProcess } from 'node:child_process';
import proto from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { events, nodeCommands, nodes, operations } from '../../db/schema';
import { ensureLivenessSweep } from '../../workflows/liveness-client';
import { createWorker } from '../../worker';
import { startDispatcher } from '../../dispatch/dispatcher';
import { silentLogger } from '../../observability/log';
import { eventually, separateHarness, type Harness } from './harness';
import { killWorker, startWorkerProcess, TEST_OUTBOX_LEASE_MS, workerExit } from './worker-process';

/**
 * One lifecycle flow, as a user and an agent push it along. Each run gets a database and a task
 * queue of its own (and an API on them), so a worker killed in one run touches no other run, and
 * no run's dispatcher delivers another's outbox.
 */
export interface Flow<C> {
  /** Seeds what the flow needs; no worker runs yet. Its pool is named for the run's queue. */
  setup(api: Harness): Promise<C>;
  workflowId(context: C): string;
  /**
   * Starts the flow and drives it to its end. `learned(n)` resolves once the workflow has recorded
   * `n` completed steps: an outside action gated on it lands between the same two steps in every
   * run, however long a dead worker held the flow up.
   */
  drive(api: Harness, context: C, learned: (steps: number) => Promise<void>): Promise<void>;
  /** What the flow leaves behind, free of ids and times: it must be the same in every run. */
  outcome(api: Harness, context: C): Promise<unknown>;
}

export interface Run {
  /** The step the worker was told to die after (null: the clean run). */
  killAfter: number | null;
  /** How the hooked worker ended: SIGKILL when the hook fired. */
  workerEnd: NodeJS.Signals | 'exited' | 'alive' | 'ended before the step' | null;
  result: unknown;
  outcome: unknown;
}

interface Done extends Run {
  /** The steps the history records, in order. */
  steps: string[];
}

const RUN_TIMEOUT_MS = 150_000;
/** Runs at a time: each holds a worker child process (its start-up dominates) and a fresh worker. */
const PARALLEL_RUNS = 6;

/** A queue no worker polls: the namespace's liveness controller waits there, sweeping nothing. */
const PARKED_CONTROLLER_QUEUE = 'liveness-controller-parked';

let runtimeInstalled = false;

/**
 * Crash tests at every step boundary: a clean run counts the steps the worker commits (what the
 * workflow history records as completed), then for each N a run whose worker (a child process of
 * `worker.ts` with its fault hook) SIGKILLs itself right after step N, and a fresh worker that
 * picks the flow up. Every run must end as the clean one did.
 */
export function useStepFaults(h: Harness) {
  let connection: Promise<NativeConnection> | null = null;
  // Each worker.ts child starts the namespace's liveness controller unless it runs; on a run's
  // queue it would sweep this database and turn the flows' silent nodes unreachable mid-run.
  beforeAll(async () => {
    await ensureLivenessSweep(h.temporal, PARKED_CONTROLLER_QUEUE);
  });
  afterAll(async () => {
    await (await connection)?.close();
  });

  /** A worker and its dispatcher on the run's database and queue, as a worker process runs them. */
  async function freshWorker(api: Harness): Promise<() => Promise<void>> {
    if (!runtimeInstalled) {
      Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
      runtimeInstalled = true;
    }
    connection ??= NativeConnection.connect({ address: h.temporalAddress });
    const worker: Worker = await createWorker({
      connection: await connection,
      db: api.db,
      namespace: 'default',
      taskQueue: api.taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    const running = worker.run();
    const dispatcher = await startDispatcher({
      db: api.db,
      sql: api.sql,
      temporal: api.temporal,
      taskQueue: api.taskQueue,
      log: silentLogger(),
      leaseMs: TEST_OUTBOX_LEASE_MS,
    });
    return async () => {
      await dispatcher.stop();
      worker.shutdown();
      await running;
    };
  }

  async function run<C>(name: string, flow: Flow<C>, killAfter: number | null): Promise<Done> {
    const separate = await separateHarness(h, `${h.taskQueue}-${name}-${killAfter ?? 'clean'}`);
    try {
      return await runOn(separate.api, flow, killAfter);
    } finally {
      await separate.close();
    }
  }

  async function runOn<C>(api: Harness, flow: Flow<C>, killAfter: number | null): Promise<Done> {
    const name = api.taskQueue;
    const context = await flow.setup(api);
    const workflowId = flow.workflowId(context);
    let child: ChildProcess | null = null;
    let fresh: Promise<() => Promise<void>> | null = null;
    let hooked: Promise<NodeJS.Signals | null> | null = null;
    if (killAfter === null) fresh = freshWorker(api);
    else {
      child = startWorkerProcess(api, {
        taskQueue: api.taskQueue,
        killAfterStep: { steps: killAfter, workflowId },
      });
      hooked = workerExit(child).then((signal) => {
        fresh = freshWorker(api);
        return signal;
      });
    }
    try {
      // Driven only once the worker polls, so the first learned step is the flow's, not a slow start.
      await polled(api);
      await flow.drive(api, context, (steps) => learned(api, workflowId, steps));
      const result = await bounded(
        eventually(
          () =>
            api.temporal.workflow
              .getHandle(workflowId)
              .result()
              .catch(() => undefined),
          RUN_TIMEOUT_MS,
        ),
        `${name}: the workflow did not end (killed after step ${killAfter})`,
      );
      const alive = child !== null && child.exitCode === null && child.signalCode === null;
      return {
        killAfter,
        workerEnd: child === null ? null : alive ? 'alive' : ((await hooked) ?? 'exited'),
        result,
        outcome: await flow.outcome(api, context),
        steps: await completedSteps(api, workflowId),
      };
    } finally {
      if (child) {
        await killWorker(child);
        await hooked;
      }
      await (
        await fresh
      )?.();
    }
  }

  /**
   * The clean run, then a run killed after each of its steps, `PARALLEL_RUNS` at a time. Returns
   * the clean run's step names; every killed run is expected to end exactly as the clean run.
   */
  async function everyStepBoundary<C>(name: string, flow: Flow<C>): Promise<Done> {
    const clean = await run(name, flow, null);
    const kills = clean.steps.map((_, i) => i + 1);
    const runs: Run[] = [];
    const queue = [...kills];
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL_RUNS, kills.length) }, async () => {
        for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
          try {
            const { killAfter, workerEnd, result, outcome, steps } = await run(name, flow, n);
            // A workflow whose steps depend on timing (a pool drain looks once per wake-up, and
            // wake-ups may arrive together or apart) may end before its n-th step: its worker had
            // nothing to die after, and stays alive. Any other run that stays alive is a failure.
            const endedEarly = workerEnd === 'alive' && steps.length < n;
            runs.push({
              killAfter,
              workerEnd: endedEarly ? 'ended before the step' : workerEnd,
              result,
              outcome,
            });
          } catch (error) {
            runs.push({
              killAfter: n,
              workerEnd: null,
              result: `failed: ${(error as Error).message}`,
              outcome: null,
            });
          }
        }
      }),
    );
    runs.sort((a, b) => a.killAfter! - b.killAfter!);
    // One table for all runs: a diff names the step boundaries that went wrong.
    expect(runs).toEqual(
      kills.map((n, i) => ({
        killAfter: n,
        workerEnd: runs[i]!.workerEnd === 'ended before the step' ? 'ended before the step' : 'SIGKILL',
        result: clean.result,
        outcome: clean.outcome,
      })),
    );
    return clean;
  }

  async function learned(api: Harness, workflowId: string, steps: number): Promise<void> {
    // Until a dispatcher starts the workflow, it has no history: nothing learned yet.
    const stepsSoFar = () => completedSteps(api, workflowId).catch(() => []);
    await eventually(async () => (await stepsSoFar()).length >= steps, RUN_TIMEOUT_MS, 100);
  }

  return { everyStepBoundary };
}

/**
 * The steps a workflow's history records as done, in order: completed activities and local
 * activities (markers). This is what the workflow has learned; a step whose worker died before
 * reporting it is not here until a worker runs it again.
 */
export async function completedSteps(h: Harness, workflowId: string): Promise<string[]> {
  const history = await h.temporal.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, string>();
  const steps: string[] = [];
  for (const event of history.events ?? []) {
    const activity = event.activityTaskScheduledEventAttributes;
    if (activity) scheduled.set(String(event.eventId), activity.activityType?.name ?? '?');
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) steps.push(scheduled.get(String(completed.scheduledEventId)) ?? '?');
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity' && !marker.failure) {
      const data = marker.details?.data?.payloads?.[0]?.data;
      const parsed = data ? (JSON.parse(Buffer.from(data).toString()) as { activity_type?: string }) : {};
      steps.push(parsed.activity_type ?? '?');
    }
  }
  return steps;
}

/** Resolves once a worker polls the harness's task queue for workflow and activity tasks. */
async function polled(h: Harness): Promise<void> {
  await eventually(
    async () => {
      for (const taskQueueType of [
        TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      ]) {
        const { pollers } = await h.temporal.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: h.taskQueue },
          taskQueueType,
        });
        if (!pollers?.length) return false;
      }
      return true;
    },
    RUN_TIMEOUT_MS,
    100,
  );
}

async function bounded<T>(promise: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), RUN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const TaskQueueType = proto.temporal.api.enums.v1.TaskQueueType;

/** The parts of a node's state a lifecycle flow moves. */
const NODE_STATE = [
  'provisionState',
  'access',
  'cordoned',
  'maintenance',
  'noScheduleReasons',
  'connectivity',
  'liveness',
] as const;

/**
 * A node after a flow, free of ids and times: how many events of each type it has, its operations
 * and commands by kind and status, and its state.
 */
export async function nodeOutcome(h: Harness, nodeId: string) {
  const types = await h.db.select({ type: events.type }).from(events).where(eq(events.nodeId, nodeId));
  const eventCounts: Record<string, number> = {};
  for (const { type } of types) eventCounts[type] = (eventCounts[type] ?? 0) + 1;
  const ops = await h.db
    .select({ kind: operations.kind, status: operations.status })
    .from(operations)
    .where(eq(operations.nodeId, nodeId))
    .orderBy(asc(operations.createdAt));
  const commands = await h.db
    .select({ kind: nodeCommands.kind, status: nodeCommands.status })
    .from(nodeCommands)
    .where(eq(nodeCommands.nodeId, nodeId))
    .orderBy(asc(nodeCommands.createdAt));
  const [node] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
  return {
    events: eventCounts,
    operations: ops,
    commands,
    node: node && {
      ...Object.fromEntries(NODE_STATE.map((field) => [field, node[field]])),
      deleted: node.deletedAt !== null,
    },
  };
}
