import {
  allHandlersFinished,
  CancellationScope,
  continueAsNew,
  isCancellation,
  condition,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_HEALTHY_AFTER_MS,
  MAX_ATTEMPTS,
  ladderFor,
  ranUncleared,
  type AttemptOutcome,
  type AttemptRecord,
  type RemediationPlan,
} from '../domain/remediation';
import {
  beginRemediationUpdate,
  remediationProgressQuery,
  remediationWakeSignal,
  type RemediationBegun,
  type RemediationEnded,
  type RemediationInput,
  type RemediationProgress,
  type RemediationRequest,
} from './definitions';
import { awaitBegin } from './begin';
import { CANCEL_CLEAN_UP_PATCH } from './cancellation';
import { stepFailure } from './refusal';

const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/**
 * Guards the ladder climb: a refused rung moves on to the next one (before it, a refusal escalated
 * at once), and attempts are named `acked`, `refused` or `timed-out`.
 */
export const LADDER_CLIMB_PATCH = 'remediation-ladder-climb';
/** Guards the queue: a remediation that ended continues as new for the node's next waiting condition. */
export const QUEUE_PATCH = 'remediation-queue';

type Result = 'succeeded' | 'escalated' | 'cancelled' | 'refused' | 'never-began';

/**
 * remediation/<nodeId>: climbs the condition's ladder, one rung per attempt (a command to the
 * node), until the condition clears; a refused rung moves on at once. The ladder exhausted, two
 * attempts that ran without clearing it, or a cancel escalate the node to maintenance in one
 * transaction. A remediation that ended (succeeded or escalated) while other conditions of the
 * node wait continues as new, and that run begins the oldest of them itself.
 */
export async function remediation(input: RemediationInput): Promise<Result> {
  let wakes = 0;
  const progress: RemediationProgress = {
    phase: 'starting',
    condition: null,
    attempt: 0,
    action: null,
    attemptDeadline: null,
    attempts: [],
    ladder: [],
    queued: [],
  };
  setHandler(remediationProgressQuery, () => progress);
  setHandler(remediationWakeSignal, () => void wakes++);
  let opId: string | null = null;
  // A begin that came as this remediation ended, and recorded an operation of its own (not a
  // re-sent begin of this run's operation, which answers it as created too).
  let late: RemediationBegun | null = null;
  // A report of another condition joins this run's operation: its answer says what now waits.
  const noteQueued = (answer: RemediationBegun) => {
    if (answer.queued && (opId === null || answer.operation.id === opId)) progress.queued = answer.queued;
    const other = opId !== null && answer.operation.id !== opId;
    if (other && answer.created && answer.operation.status === 'running') late = answer;
    return answer;
  };
  const begun = await awaitBegin(
    beginRemediationUpdate,
    input.nodeId,
    (request) => steps.beginRemediation(request).then(noteQueued),
    input.queued ? queuedBegin(input.queued) : undefined,
  );
  if (begun.begun === null) return begun.outcome;
  const start = begun.begun;
  opId = start.operation.id;
  const type = start.condition;
  progress.condition = type;
  /**
   * Once this remediation ended (succeeded or escalated): a new run for the oldest waiting
   * condition — or for the operation a begin recorded while this one ended (the new run's own
   * begin joins it).
   */
  const next = async (queued: string[] | undefined) => {
    if (!allHandlersFinished() && patched(QUEUE_PATCH)) await condition(allHandlersFinished);
    const waiting: RemediationBegun | null = late;
    progress.queued = queued ?? [];
    const nextCondition = waiting?.condition ?? queued?.[0];
    if (nextCondition === undefined || !patched(QUEUE_PATCH)) return;
    await continueAsNew<typeof remediation>({
      nodeId: input.nodeId,
      queued: { condition: nextCondition, after: opId! },
    });
  };
  if (start.escalated) {
    progress.phase = 'escalated';
    setCurrentDetails('escalated to maintenance at once: remediation storm in the pool');
    await next(start.queued);
    return 'escalated';
  }

  // A plan recorded at begin decides; histories from before plans read the deployment's settings.
  const plan: RemediationPlan = start.plan ?? {
    ladder: ladderFor(type, input.settings?.ladders),
    attemptTimeoutMs: input.settings?.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    healthyAfterMs: DEFAULT_HEALTHY_AFTER_MS,
  };
  progress.ladder = plan.ladder;
  const climbs = patched(LADDER_CLIMB_PATCH);
  const escalate = async (reason: string, status: 'failed' | 'cancelled') =>
    (await steps.escalateRemediation({
      nodeId: input.nodeId,
      operationId: opId,
      condition: type,
      attempts: progress.attempts,
      reason,
      status,
    })) as RemediationEnded | undefined;
  const escalated = async (reason: string, details: string) => {
    const ended = await escalate(reason, 'failed');
    progress.phase = 'escalated';
    setCurrentDetails(`escalated to maintenance: ${details}`);
    await next(ended?.queued);
    return 'escalated' as const;
  };

  try {
    const rungs = climbs ? plan.ladder.length : Math.min(MAX_ATTEMPTS, plan.ladder.length);
    for (let attempt = 1; attempt <= rungs; attempt++) {
      const action = plan.ladder[attempt - 1]!;
      const commandId = await steps.startAttempt({
        nodeId: input.nodeId,
        operationId: opId,
        attempt,
        action,
        condition: type,
      });
      const record: AttemptRecord = { attempt, action, commandId, outcome: null };
      progress.attempts.push(record);
      const deadline = Date.now() + plan.attemptTimeoutMs;
      Object.assign(progress, {
        phase: 'attempting',
        attempt,
        action,
        attemptDeadline: new Date(deadline).toISOString(),
      });
      setCurrentDetails(
        `attempt ${attempt} of at most ${rungs}: ${action}; waiting for ${type} to clear until ${progress.attemptDeadline!.slice(11, 19)}Z`,
      );
      const outcome = await attemptOutcome(input.nodeId, commandId, type, deadline, () => wakes, climbs);
      record.outcome = outcome.outcome;
      record.refuseReason = outcome.refuseReason;
      if (outcome.outcome === 'cleared') {
        const ended = (await steps.succeedRemediation({
          nodeId: input.nodeId,
          operationId: opId,
          attempts: progress.attempts,
        })) as RemediationEnded | undefined;
        progress.phase = 'succeeded';
        setCurrentDetails(`succeeded: ${type} cleared after ${action}`);
        await next(ended?.queued);
        return 'succeeded';
      }
      if (outcome.outcome === 'cancelled') {
        await escalate('the node was deleted', 'cancelled');
        progress.phase = 'cancelled';
        return 'cancelled';
      }
      if (outcome.outcome === 'failed') {
        // Before the climb: a refusal escalated at once.
        return escalated(
          `${action} failed: ${outcome.refuseReason ?? 'refused by the node'}`,
          `${action} failed`,
        );
      }
      const ran = progress.attempts.filter((a) => ranUncleared(a.outcome)).length;
      if (climbs && ran >= MAX_ATTEMPTS) break;
    }
    if (climbs) {
      const summary = progress.attempts.map((a) => `${a.action} ${a.outcome}`).join(', ');
      return escalated(`${type} not cleared: ${summary}`, 'the condition did not clear');
    }
    return escalated(
      `${type} not cleared in ${progress.attempts.length} attempts`,
      'the condition did not clear',
    );
  } catch (error) {
    const failure = stepFailure(error);
    if (failure) {
      // A step that gave up ends the remediation as a failed one does: escalated to maintenance.
      return escalated(`${failure.step} failed: ${failure.reason}`, `${failure.step} failed`);
    }
    if (!isCancellation(error)) throw error;
    const open = progress.attempts.at(-1);
    if (open && open.outcome === null) open.outcome = 'cancelled';
    await CancellationScope.nonCancellable(async () => {
      // One clean-up for every kind (workflows/cancellation.ts); it escalates a remediation too.
      if (patched(CANCEL_CLEAN_UP_PATCH)) await steps.cleanUpCancelled({ attempts: progress.attempts });
      else await escalate('remediation cancelled', 'cancelled');
    });
    progress.phase = 'cancelled';
    setCurrentDetails('cancelled: escalated to maintenance');
    return 'cancelled';
  }
}

/** The begin a continued run makes itself for the condition that waited. */
function queuedBegin(queued: NonNullable<RemediationInput['queued']>): RemediationRequest {
  return {
    actor: 'system:remediation',
    reason: `queued while ${queued.after} ran`,
    idempotencyScope: null,
    idempotencyKey: null,
    requestHash: null,
    condition: queued.condition,
    automatic: true,
    queued: true,
  };
}

/**
 * Waits for the attempt to end: cleared, refused, or its deadline — `acked` when the node ran the
 * action by then, `timed-out` when it never answered. Before the climb, a refusal was `failed`.
 */
async function attemptOutcome(
  nodeId: string,
  commandId: string,
  type: string,
  deadline: number,
  wakes: () => number,
  climbs: boolean,
): Promise<{ outcome: AttemptOutcome; refuseReason: string | null }> {
  for (;;) {
    const seen = wakes();
    const check = await steps.checkAttempt({ nodeId, commandId, condition: type });
    if (check.deleted) return { outcome: 'cancelled', refuseReason: null };
    if (check.cleared) return { outcome: 'cleared', refuseReason: null };
    if (check.command === 'refused')
      return { outcome: climbs ? 'refused' : 'failed', refuseReason: check.refuseReason };
    const left = deadline - Date.now();
    if (left <= 0)
      return { outcome: climbs && check.command === 'acked' ? 'acked' : 'timed-out', refuseReason: null };
    await condition(() => wakes() !== seen, left);
  }
}
