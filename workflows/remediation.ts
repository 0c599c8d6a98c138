import {
  CancellationScope,
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
  MAX_ATTEMPTS,
  ladderFor,
  type AttemptOutcome,
  type AttemptRecord,
} from '../domain/remediation';
import {
  beginRemediationUpdate,
  remediationProgressQuery,
  remediationWakeSignal,
  type RemediationInput,
  type RemediationProgress,
} from './definitions';
import { awaitBegin } from './begin';
import { CANCEL_CLEAN_UP_PATCH } from './cancellation';
import { stepFailure } from './refusal';

const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

type Result = 'succeeded' | 'escalated' | 'cancelled' | 'refused' | 'never-began';

/**
 * remediation/<nodeId>: tries the condition's ladder, one rung per attempt (a command to the
 * node), until the condition clears; a failed, cancelled or twice-uncleared remediation escalates
 * the node to maintenance in one transaction.
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
  };
  setHandler(remediationProgressQuery, () => progress);
  setHandler(remediationWakeSignal, () => void wakes++);
  const start = await awaitBegin(beginRemediationUpdate, input.nodeId, (request) =>
    steps.beginRemediation(request),
  );
  if (start.begun === null) return start.outcome;
  const opId = start.begun.operation.id;
  const type = start.begun.condition;
  progress.condition = type;
  if (start.begun.escalated) {
    progress.phase = 'escalated';
    setCurrentDetails('escalated to maintenance at once: remediation storm in the pool');
    return 'escalated';
  }

  const ladder = ladderFor(type, input.settings?.ladders);
  const timeoutMs = input.settings?.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const escalate = (reason: string, status: 'failed' | 'cancelled') =>
    steps.escalateRemediation({
      nodeId: input.nodeId,
      operationId: opId,
      condition: type,
      attempts: progress.attempts,
      reason,
      status,
    });

  try {
    for (let attempt = 1; attempt <= Math.min(MAX_ATTEMPTS, ladder.length); attempt++) {
      const action = ladder[attempt - 1]!;
      const commandId = await steps.startAttempt({
        nodeId: input.nodeId,
        operationId: opId,
        attempt,
        action,
        condition: type,
      });
      const record: AttemptRecord = { attempt, action, commandId, outcome: null };
      progress.attempts.push(record);
      const deadline = Date.now() + timeoutMs;
      Object.assign(progress, {
        phase: 'attempting',
        attempt,
        action,
        attemptDeadline: new Date(deadline).toISOString(),
      });
      setCurrentDetails(
        `attempt ${attempt} of ${MAX_ATTEMPTS}: ${action}; waiting for ${type} to clear until ${progress.attemptDeadline!.slice(11, 19)}Z`,
      );
      const outcome = await attemptOutcome(input.nodeId, commandId, type, deadline, () => wakes);
      record.outcome = outcome.outcome;
      record.refuseReason = outcome.refuseReason;
      if (outcome.outcome === 'cleared') {
        await steps.succeedRemediation({
          nodeId: input.nodeId,
          operationId: opId,
          attempts: progress.attempts,
        });
        progress.phase = 'succeeded';
        setCurrentDetails(`succeeded: ${type} cleared after ${action}`);
        return 'succeeded';
      }
      if (outcome.outcome === 'cancelled') {
        await escalate('the node was deleted', 'cancelled');
        progress.phase = 'cancelled';
        return 'cancelled';
      }
      if (outcome.outcome === 'failed') {
        await escalate(`${action} failed: ${outcome.refuseReason ?? 'refused by the node'}`, 'failed');
        progress.phase = 'escalated';
        setCurrentDetails(`escalated to maintenance: ${action} failed`);
        return 'escalated';
      }
    }
    await escalate(`${type} not cleared in ${progress.attempts.length} attempts`, 'failed');
    progress.phase = 'escalated';
    setCurrentDetails('escalated to maintenance: the condition did not clear');
    return 'escalated';
  } catch (error) {
    const failure = stepFailure(error);
    if (failure) {
      // A step that gave up ends the remediation as a failed one does: escalated to maintenance.
      await escalate(`${failure.step} failed: ${failure.reason}`, 'failed');
      progress.phase = 'escalated';
      setCurrentDetails(`escalated to maintenance: ${failure.step} failed`);
      return 'escalated';
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

/** Waits for the attempt to end: cleared, failed (refused), or its deadline. */
async function attemptOutcome(
  nodeId: string,
  commandId: string,
  type: string,
  deadline: number,
  wakes: () => number,
): Promise<{ outcome: AttemptOutcome; refuseReason: string | null }> {
  for (;;) {
    const seen = wakes();
    const check = await steps.checkAttempt({ nodeId, commandId, condition: type });
    if (check.deleted) return { outcome: 'cancelled', refuseReason: null };
    if (check.cleared) return { outcome: 'cleared', refuseReason: null };
    if (check.command === 'refused') return { outcome: 'failed', refuseReason: check.refuseReason };
    const left = deadline - Date.now();
    if (left <= 0) return { outcome: 'timed-out', refuseReason: null };
    await condition(() => wakes() !== seen, left);
  }
}
