import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  DRAIN_MAX_SLEEP_MS,
  allocationReleasedSignal,
  beginDrainUpdate,
  budgetFreedSignal,
  drainCancelledSignal,
  progressQuery,
  type DrainInput,
  type DrainOutcome,
  type DrainProgress,
} from './definitions';
import { describeBudget, type Budget } from '../domain/budget';
import { isFinished } from '../domain/operation';
import { beginInput } from './begin';
import { cleanUpOnCancel } from './cancellation';
import { reportToParent } from './parent';
import { asRefusal, unlessGivenUp } from './refusal';
import { OperationIdKey } from './search-attributes';

// Local activities: each step is one short transaction, and running it inside the workflow task
// saves the activity-task round trip between a release and `node.drained` (bench: drain-reaction).
const { beginDrain, checkDrain, forceReleaseDrain, failOperation } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** How long a started workflow waits for its `begin` update before it ends itself. */
const BEGIN_TIMEOUT = '1 minute';
/** Shortest sleep, so a clock a little behind the database's never spins. */
const MIN_SLEEP_MS = 250;
/** Guards the forced release at the deadline: drains recorded before it never reach one. */
const FORCED_RELEASE_PATCH = 'drain-forced-release';
/**
 * A child's pool drain learns how it ended from its result (the child-completed event its history
 * records anyway), so the child no longer signals it: one signal, one workflow task of the child and
 * one of the parent fewer per node (bench: pool-drain). It signals only when a begin replaced its
 * operation (the result then is the new one's). Drains recorded before it signal at the end.
 */
const RESULT_REPORTS_PATCH = 'drain-result-reports';

/**
 * drain/<nodeId>: waits until the node holds no live allocation, then marks it drained. Once its
 * deadline (if any) passed, it releases what is left, when the pool's disruption budget has a slot.
 */
export async function drain(input: DrainInput): Promise<DrainOutcome> {
  return cleanUpOnCancel(() => drainUntilDone(input));
}

async function drainUntilDone(input: DrainInput): Promise<DrainOutcome> {
  let operationId: string | null = input.resume?.operationId ?? null;
  let beginRefused = false;
  /** A begin answered with a drain that already finished (see below): this run has nothing to do. */
  let answeredFromRecord = false;
  let wakeups = 0;
  const progress: DrainProgress = {
    phase: 'starting',
    liveAllocationCount: 0,
    liveAllocations: [],
    earliestEndsAt: null,
    nextCheckAt: null,
    startedAt: input.resume?.startedAt ?? new Date().toISOString(),
    deadline: input.resume?.deadline ?? null,
    budget: null,
  };

  setHandler(beginDrainUpdate, async (request) => {
    try {
      const result = await beginDrain(beginInput(request, input.nodeId));
      // The node is still drained by an earlier drain, or an Idempotency-Key named a finished one:
      // the answer is that operation, and this run must not take it on (nor touch anything).
      if (!result.created && isFinished(result.operation.status)) {
        answeredFromRecord = true;
        return result;
      }
      // The begin that made the operation fixes the deadline; one that joins it changes nothing.
      if (result.created) progress.deadline = request.deadline ?? null;
      if (result.operation.id !== operationId) {
        const replaced = operationId;
        operationId = result.operation.id;
        upsertSearchAttributes([{ key: OperationIdKey, value: operationId }]);
        // A child whose operation this begin replaced (and ended) tells its pool drain now: its
        // result will be the new operation's. The run ends only once this handler finished.
        if (replaced !== null && patched(RESULT_REPORTS_PATCH)) {
          await reportToParent({ nodeId: input.nodeId, operationId: replaced, outcome: 'cancelled' });
        }
      }
      wakeups++;
      return result;
    } catch (error) {
      beginRefused = true;
      throw asRefusal(error);
    }
  });
  setHandler(allocationReleasedSignal, () => void wakeups++);
  setHandler(drainCancelledSignal, () => void wakeups++);
  setHandler(budgetFreedSignal, () => void wakeups++);
  setHandler(progressQuery, () => progress);

  if (operationId === null) {
    setCurrentDetails('starting: waiting for the begin request');
    const began = await condition(
      () => operationId !== null || beginRefused || answeredFromRecord,
      BEGIN_TIMEOUT,
    );
    await condition(allHandlersFinished);
    if (operationId === null) {
      if (answeredFromRecord) return 'already-done';
      return began ? 'refused' : 'never-began';
    }
  }

  const limit = input.continueAsNewAfter ?? 500;
  for (let iteration = 0; ; iteration++) {
    const current: string = operationId!;
    const seen = wakeups;
    const look = await unlessGivenUp(
      async () => {
        const check = await checkDrain({ nodeId: input.nodeId, operationId: current });
        const deadline = progress.deadline;
        if (check.outcome !== 'waiting' || !deadline || Date.parse(deadline) > Date.now()) {
          return { check, forced: null };
        }
        if (!patched(FORCED_RELEASE_PATCH)) return { check, forced: null };
        const forced = await forceReleaseDrain({ nodeId: input.nodeId, operationId: current, deadline });
        return { check, forced };
      },
      (failure) => failOperation({ nodeId: input.nodeId, operationId: current, failure }),
    );
    if (look === 'failed') {
      // As below: a begin that arrived meanwhile started a new drain; keep draining for it.
      await condition(allHandlersFinished);
      if (operationId !== current) continue;
      progress.phase = 'failed';
      progress.nextCheckAt = null;
      if (!patched(RESULT_REPORTS_PATCH)) {
        await reportToParent({ nodeId: input.nodeId, operationId: current, outcome: 'failed' });
      }
      return 'failed';
    }
    const { check, forced } = look;
    if (check.outcome !== 'waiting') {
      // A begin that arrived meanwhile may have replaced a stale operation: keep draining for it.
      await condition(allHandlersFinished);
      if (operationId !== current) continue;
      progress.phase = check.outcome === 'drained' ? 'drained' : 'cancelled';
      progress.nextCheckAt = null;
      progress.budget = null;
      setCurrentDetails(check.outcome === 'drained' ? 'drained' : `ended: ${check.outcome}`);
      if (!patched(RESULT_REPORTS_PATCH)) {
        await reportToParent({ nodeId: input.nodeId, operationId: current, outcome: check.outcome });
      }
      return check.outcome;
    }
    // Released (or the drain ended meanwhile): the next look finds the node empty (or ended).
    if (forced && forced.outcome !== 'waiting') continue;
    const budget: Budget | null = forced?.budget ?? null;

    const now = Date.now();
    const endsAt = check.earliestEndsAt ? Date.parse(check.earliestEndsAt) : Infinity;
    // Before the deadline it is a wake-up of its own; past it, only a freed slot or an end helps.
    const deadlineAt = progress.deadline && !budget ? Date.parse(progress.deadline) : Infinity;
    const wakeAt = Math.min(endsAt, deadlineAt);
    const sleep = Math.max(MIN_SLEEP_MS, Math.min(wakeAt - now, DRAIN_MAX_SLEEP_MS));
    const nextCheckAt = new Date(now + sleep).toISOString();
    Object.assign(progress, {
      phase: budget ? 'waiting-for-budget' : 'waiting',
      liveAllocationCount: check.liveAllocationCount,
      liveAllocations: check.liveAllocations,
      earliestEndsAt: check.earliestEndsAt,
      nextCheckAt,
      budget,
    });
    const why =
      wakeAt - now > DRAIN_MAX_SLEEP_MS ? 'periodic' : deadlineAt < endsAt ? 'deadline' : 'earliest end';
    const waitingFor = `${check.liveAllocationCount} allocation${check.liveAllocationCount === 1 ? '' : 's'}`;
    setCurrentDetails(
      (budget
        ? `waiting for budget: ${describeBudget(budget)}; ${waitingFor} live`
        : `waiting for ${waitingFor}`) + `; next check ${nextCheckAt.slice(11, 16)}Z (${why})`,
    );
    await condition(() => wakeups !== seen, sleep);

    if (iteration + 1 >= limit || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof drain>({
        ...input,
        resume: { operationId: operationId!, startedAt: progress.startedAt!, deadline: progress.deadline },
      });
    }
  }
}
