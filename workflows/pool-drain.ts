import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import type { NodeDrainBegin, NodeDrainRecord } from '../activities/pool-drain';
import { deadlineOf } from '../domain/deadline';
import { derivedUlid } from '../domain/ulid';
import { awaitBeginOf, beginOperationId } from './begin';
import {
  beginPoolDrainUpdate,
  drainWorkflowId,
  nodeDrainEndedSignal,
  POOL_DRAIN_LISTED,
  POOL_DRAIN_WAVE,
  poolDrainProgressQuery,
  type ActiveNode,
  type NodeDrainReport,
  type PoolDrainBegun,
  type PoolDrainCounts,
  type PoolDrainInput,
  type PoolDrainOutcome,
  type PoolDrainProgress,
  type PoolDrainRequest,
  type PoolDrainState,
} from './definitions';
import { drain } from './drain';
import { asRefusal } from './refusal';
import {
  HostnameKey,
  LifecycleOperationKey,
  NodeIdKey,
  OperationIdKey,
  PoolIdKey,
  TenantIdKey,
} from './search-attributes';

const retry = { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' } as const;
// Local activities: the begin, the record reads and the end are short transactions, and running
// them inside the workflow task saves the activity-task round trip.
const { beginPoolDrain, readNodeDrains, finishPoolDrain, cancelPoolDrain } = proxyLocalActivities<Activities>(
  {
    startToCloseTimeout: '1 minute',
    retry,
  },
);
// A wave's begins are an activity of their own: awaiting one ends the workflow task, so the last
// wave's child starts go to the server and run while the next wave's begins do (bench: pool-drain).
const { beginNodeDrains } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry });

/** The most node begins one activity makes (each its own transaction). */
const WAVE = POOL_DRAIN_WAVE;
const DEFAULT_POLL_MS = 10_000;
/** Shortest sleep between looks, so a clock a little behind never spins. */
const MIN_SLEEP_MS = 250;
/** History events after which a run continues as new; well below Temporal's warning at 10,240. */
const DEFAULT_CONTINUE_AS_NEW_AFTER = 8_000;

/**
 * pool-drain/<poolId>: drains the nodes its begin selected, at most `maxConcurrent` at a time, each
 * as a child `drain/<nodeId>` that keeps its own operation record (docs/lifecycle/drain.md).
 */
export async function poolDrain(input: PoolDrainInput): Promise<PoolDrainOutcome> {
  const reports: NodeDrainReport[] = [...(input.resume?.reports ?? [])];
  const waiting = new Set<string>();
  let state: PoolDrainState | null = input.resume ?? null;
  let phase: PoolDrainProgress['phase'] = state ? 'draining' : 'starting';
  const reported = (report: NodeDrainReport) => void reports.push(report);
  // A child reports how it ended by its result; by a signal when its operation was replaced (and
  // drains started before children reported by their result, the way they all did).
  setHandler(nodeDrainEndedSignal, reported);
  setHandler(poolDrainProgressQuery, () => progressOf(state, phase, waiting));

  const beginFor = (request: PoolDrainRequest): Promise<PoolDrainBegun> =>
    beginPoolDrain({
      ...request,
      poolId: input.poolId,
      workflowId: workflowInfo().workflowId,
      operationId: beginOperationId(request),
    });

  if (!state) {
    let asked: PoolDrainRequest | null = null;
    const begin = await awaitBeginOf(beginPoolDrainUpdate, async (request) => {
      const result = await beginFor(request);
      if (result.created) asked ??= request;
      return result;
    });
    if (!begin.begun) return begin.outcome;
    // An Idempotency-Key named a pool drain that already ran: the answer is that operation.
    if (!begin.begun.created || !asked) return 'already-done';
    const request: PoolDrainRequest = asked;
    state = {
      operationId: begin.begun.operation.id,
      startedAt: new Date().toISOString(),
      actor: request.actor,
      reason: request.reason,
      maxConcurrent: request.maxConcurrent,
      deadline: request.deadline,
      pending: begin.begun.nodeIds,
      active: [],
      drained: [],
      failed: [],
      reports: [],
    };
    phase = 'draining';
  } else {
    // A later begin (the same drain asked for again) answers the running operation.
    setHandler(beginPoolDrainUpdate, async (request) => {
      try {
        return await beginFor(request);
      } catch (error) {
        throw asRefusal(error);
      }
    });
  }
  const run: PoolDrainState = state;
  const pollMs = input.pollIntervalMs ?? DEFAULT_POLL_MS;
  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  const describe = () => setCurrentDetails(detailsOf(progressOf(run, phase, waiting)));

  try {
    // A run that continued as new has not heard from the drains since: it reads them all first.
    let lookedAt = input.resume ? -Infinity : Date.now();
    for (;;) {
      const look = Date.now() - lookedAt >= pollMs;
      if (look) lookedAt = Date.now();
      await CancellationScope.nonCancellable(async () => {
        await settle(run, reports.splice(0), look, waiting);
        await startWaves(input.poolId, run, reported);
      });
      describe();
      if (run.pending.length === 0 && run.active.length === 0) break;
      await condition(() => reports.length > 0, Math.max(MIN_SLEEP_MS, lookedAt + pollMs - Date.now()));
      const info = workflowInfo();
      if (info.historyLength >= limit || info.continueAsNewSuggested) {
        await condition(allHandlersFinished);
        return continueAsNew<typeof poolDrain>({ ...input, resume: { ...run, reports: reports.splice(0) } });
      }
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return CancellationScope.nonCancellable(async (): Promise<PoolDrainOutcome> => {
      phase = 'cancelling';
      describe();
      const cancellation = await cancelPoolDrain({
        operationId: run.operationId,
        counts: countsOf(run, waiting),
        failed: run.failed,
        children: run.active.filter((node) => node.child).map((node) => node.operationId),
      });
      if (cancellation.children === 'cancel') {
        await Promise.all(
          run.active
            .filter((node) => node.child)
            .map((node) =>
              // A child that ended meanwhile has nothing to cancel.
              getExternalWorkflowHandle(drainWorkflowId(node.nodeId))
                .cancel()
                .catch(() => undefined),
            ),
        );
      }
      phase = 'cancelled';
      setCurrentDetails(`cancelled by ${cancellation.by}; ${detailsOf(progressOf(run, phase, waiting))}`);
      return 'cancelled';
    });
  }

  await finishPoolDrain({ operationId: run.operationId, counts: countsOf(run, waiting), failed: run.failed });
  const outcome = run.failed.length === 0 ? 'succeeded' : 'failed';
  phase = outcome;
  describe();
  return outcome;
}

/**
 * Begins node drains until `maxConcurrent` run or none is left: one activity per wave for the
 * begins, and the children of every wave started side by side, the next wave's begins not
 * waiting for the last wave's starts (bench: pool-drain).
 */
async function startWaves(
  poolId: string,
  run: PoolDrainState,
  reported: (report: NodeDrainReport) => void,
): Promise<void> {
  const starting: Promise<void>[] = [];
  while (run.pending.length > 0 && run.active.length < run.maxConcurrent) {
    const now = Date.now();
    const startedAt = new Date(now).toISOString();
    const deadline = run.deadline ? deadlineOf(run.deadline, now) : null;
    const wave = run.pending
      .slice(0, Math.min(run.maxConcurrent - run.active.length, WAVE))
      .map((nodeId) => ({
        nodeId,
        // Named by the pool drain's operation and the node: a wave begun again (a workflow task
        // retried after a crash, a run that continued as new) finds the operation it made.
        operationId: `op_${derivedUlid(run.operationId.slice('op_'.length), nodeId)}`,
        deadline,
      }));
    const begun = await beginNodeDrains({ actor: run.actor, reason: run.reason, nodes: wave });
    run.pending.splice(0, wave.length);
    for (const node of begun) {
      switch (node.state) {
        case 'refused':
          run.failed.push({ nodeId: node.nodeId, operationId: null, code: node.code, message: node.message });
          break;
        case 'drained':
          run.drained.push(node.nodeId);
          break;
        case 'joined':
          run.active.push({ nodeId: node.nodeId, operationId: node.operationId, child: false });
          break;
        case 'began': {
          const active: ActiveNode = { nodeId: node.nodeId, operationId: node.operationId, child: true };
          run.active.push(active);
          starting.push(
            startNode(poolId, run, node, startedAt, deadline, reported).then(
              (child) => void (active.child = child),
            ),
          );
          break;
        }
      }
    }
  }
  await Promise.all(starting);
}

/**
 * Starts the child `drain/<nodeId>` of a node whose drain began, and reports how it ended once its
 * result comes (a child that failed or was cancelled as not drained: its record says why). A child
 * whose operation a begin replaced has reported that operation by signal before (workflows/drain.ts).
 * False when a drain the API started a moment before took the operation on: the pool drain follows
 * it by its record, as a run that continued as new follows the children of earlier runs.
 */
async function startNode(
  poolId: string,
  run: PoolDrainState,
  node: NodeDrainBegin & { state: 'began' },
  startedAt: string,
  deadline: string | null,
  reported: (report: NodeDrainReport) => void,
): Promise<boolean> {
  try {
    const child = await startChild(drain, {
      workflowId: drainWorkflowId(node.nodeId),
      args: [{ nodeId: node.nodeId, resume: { operationId: node.operationId, startedAt, deadline } }],
      // The children outlive a continue-as-new of this run, and its cancellation unless asked.
      parentClosePolicy: 'ABANDON',
      cancellationType: 'ABANDON',
      typedSearchAttributes: [
        { key: NodeIdKey, value: node.nodeId },
        { key: TenantIdKey, value: node.tenantId ?? '' },
        { key: PoolIdKey, value: poolId },
        { key: LifecycleOperationKey, value: 'drain' },
        { key: HostnameKey, value: node.hostname },
        { key: OperationIdKey, value: node.operationId },
      ],
      staticSummary: `drain ${node.hostname} (${node.nodeId}): ${run.reason ?? 'no reason given'}`,
    });
    const ended = { nodeId: node.nodeId, operationId: node.operationId };
    void child.result().then(
      (outcome) => reported({ ...ended, outcome }),
      () => reported({ ...ended, outcome: 'failed' }),
    );
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/**
 * Takes in what the children reported, and reads the records of the drains it must look at: the
 * reported ones that did not drain (for why), or every running
 * one when `all` (the fallback for the children of earlier runs and lost reports, for joined
 * drains, which have no parent, and for the budget waits).
 */
async function settle(
  run: PoolDrainState,
  reports: NodeDrainReport[],
  all: boolean,
  waiting: Set<string>,
): Promise<void> {
  const look = new Set<string>();
  for (const report of reports) {
    const node = run.active.find((a) => a.operationId === report.operationId);
    if (!node) continue;
    if (report.outcome === 'drained') end(run, node, null, waiting);
    else look.add(node.operationId);
  }
  const ids = all ? run.active.map((a) => a.operationId) : [...look];
  if (ids.length === 0) return;
  for (const record of await readNodeDrains({ operationIds: ids })) {
    const node = run.active.find((a) => a.operationId === record.operationId);
    if (!node) continue;
    if (record.status === 'pending' || record.status === 'running') {
      if (record.waitingForBudget) waiting.add(record.operationId);
      else waiting.delete(record.operationId);
      continue;
    }
    end(run, node, record, waiting);
  }
}

/** A node drain ended: drained when its record succeeded (or its child said so), else failed. */
function end(run: PoolDrainState, node: ActiveNode, record: NodeDrainRecord | null, waiting: Set<string>) {
  run.active.splice(run.active.indexOf(node), 1);
  waiting.delete(node.operationId);
  if (!record || record.status === 'succeeded') {
    run.drained.push(node.nodeId);
    return;
  }
  const error = record.error ?? {};
  const text = (key: string) => (typeof error[key] === 'string' ? (error[key] as string) : undefined);
  run.failed.push({
    nodeId: node.nodeId,
    operationId: node.operationId,
    code: record.status === 'cancelled' ? 'CANCELLED' : (text('code') ?? 'FAILED'),
    message:
      record.status === 'cancelled'
        ? 'the node drain was cancelled (uncordon, or cancelled by an operator)'
        : (text('reason') ?? text('message') ?? 'the node drain failed'),
  });
}

function countsOf(run: PoolDrainState | null, waiting: Set<string>): PoolDrainCounts {
  if (!run) return { pending: 0, draining: 0, waitingForBudget: 0, drained: 0, failed: 0 };
  return {
    pending: run.pending.length,
    draining: run.active.length - waiting.size,
    waitingForBudget: waiting.size,
    drained: run.drained.length,
    failed: run.failed.length,
  };
}

function progressOf(
  run: PoolDrainState | null,
  phase: PoolDrainProgress['phase'],
  waiting: Set<string>,
): PoolDrainProgress {
  const listed = <T>(items: readonly T[]) => items.slice(0, POOL_DRAIN_LISTED);
  const active = run?.active ?? [];
  return {
    phase,
    counts: countsOf(run, waiting),
    nodes: {
      pending: listed(run?.pending ?? []),
      draining: listed(active.filter((a) => !waiting.has(a.operationId)).map((a) => a.nodeId)),
      waitingForBudget: listed(active.filter((a) => waiting.has(a.operationId)).map((a) => a.nodeId)),
      drained: listed(run?.drained ?? []),
      failed: listed(run?.failed ?? []),
    },
    maxConcurrent: run?.maxConcurrent ?? 0,
    deadline: run?.deadline ?? null,
    startedAt: run?.startedAt ?? null,
  };
}

/** `12 drained, 5 draining (1 waiting for budget), 30 pending, 3 failed`. */
function detailsOf(progress: PoolDrainProgress): string {
  const c = progress.counts;
  const budget = c.waitingForBudget > 0 ? ` (${c.waitingForBudget} waiting for budget)` : '';
  return (
    `${progress.phase}: ${c.drained} drained, ${c.draining + c.waitingForBudget} draining${budget}, ` +
    `${c.pending} pending, ${c.failed} failed; at most ${progress.maxConcurrent} at a time`
  );
}
