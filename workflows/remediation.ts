import { condition, proxyLocalActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { AttemptCheck } from '../activities/remediation';
import type { Activities } from '../activities';
import { progressInWords, type RemediationProgress } from '../domain/progress';
import { MAX_ATTEMPTS, ranUncleared, type AttemptOutcome, type AttemptRecord } from '../domain/remediation';
import { cleanUpOnCancel } from './cancellation';
import { remediationProgressQuery, wakeSignal, type NodeOperationInput } from './definitions';
import { waitingForWorker } from './progress';
import { stepFailure } from './refusal';

const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

export type RemediationOutcome = 'succeeded' | 'escalated' | 'cancelled';

/**
 * remediation/<nodeId>: climbs the condition's ladder, one rung per attempt (a command to the
 * node), until the condition clears; a refused rung moves on at once. The ladder exhausted, or two
 * attempts that ran without clearing it, escalate the node to maintenance in one transaction. The
 * end of a remediation requests the node's next waiting condition's own (db/requests/remediation.ts).
 * A DELETE of the operation, or of the node, ends it in the database (escalated): the attempt's
 * check finds it so.
 */
export async function remediation(input: NodeOperationInput): Promise<RemediationOutcome> {
  let progress: RemediationProgress = waitingForWorker('remediation');
  let wakes = 0;
  const attempts: AttemptRecord[] = [];
  setHandler(remediationProgressQuery, () => progress);
  setHandler(wakeSignal, () => void wakes++);
  const ids = { nodeId: input.nodeId, operationId: input.operationId };
  const show = () => setCurrentDetails(progressInWords(progress, Date.now()));
  const escalated = async (reason: string): Promise<'escalated'> => {
    progress = await steps.escalateRemediation({ ...ids, attempts, reason });
    show();
    return 'escalated';
  };

  return cleanUpOnCancel(
    async (): Promise<RemediationOutcome> => {
      const begun = await steps.beginRemediation({ operationId: input.operationId });
      progress = begun.progress;
      if (progress.phase !== 'attempting') return outcomeOf(progress);
      const { plan } = begun;
      const type = begun.progress.waitingFor!.condition;
      try {
        for (let attempt = 1; attempt <= plan.ladder.length; attempt++) {
          const action = plan.ladder[attempt - 1]!;
          const started = await steps.startAttempt({
            ...ids,
            attempt,
            action,
            attempts: [...attempts],
            timeoutMs: plan.attemptTimeoutMs,
          });
          progress = started.progress;
          if (!started.commandId) return outcomeOf(progress);
          show();
          const record: AttemptRecord = { attempt, action, commandId: started.commandId, outcome: null };
          attempts.push(record);
          const deadline = Date.parse(progress.waitingFor!.attemptDeadline!);
          const outcome = await attemptOutcome(ids, started.commandId, type, deadline, () => wakes);
          if ('ended' in outcome) {
            record.outcome = 'cancelled';
            progress = outcome.ended;
            return outcomeOf(progress);
          }
          record.outcome = outcome.outcome;
          record.refuseReason = outcome.refuseReason;
          if (outcome.outcome === 'cleared') {
            progress = await steps.succeedRemediation({ ...ids, attempts });
            show();
            return 'succeeded';
          }
          if (attempts.filter((a) => ranUncleared(a.outcome)).length >= MAX_ATTEMPTS) break;
        }
        const summary = attempts.map((a) => `${a.action} ${a.outcome}`).join(', ');
        return escalated(`${type} not cleared: ${summary}`);
      } catch (error) {
        const failure = stepFailure(error);
        if (!failure) throw error;
        // A step that gave up ends the remediation as one that did not clear: escalated.
        return escalated(`${failure.step} failed: ${failure.reason}`);
      }
    },
    // The attempt cut short by the cancel ends `cancelled`, as the escalation lists it.
    () => ({
      attempts: attempts.map((a) => (a.outcome === null ? { ...a, outcome: 'cancelled' as const } : a)),
    }),
  );
}

/**
 * How an operation this run found ended had ended: before any worker took it (cancelled, or its node
 * deleted: escalated then), or by this run's own steps in a workflow task Temporal discarded (a
 * signal came in as it completed) and that the run now replays: their effect stands.
 */
function outcomeOf(ended: RemediationProgress): RemediationOutcome {
  return ended.phase === 'succeeded' || ended.phase === 'escalated' ? ended.phase : 'cancelled';
}

/**
 * Waits for the attempt to end: cleared, refused, or its deadline — `acked` when the node ran the
 * action by then, `timed-out` when it never answered; `ended` (the record) when the operation ended
 * meanwhile.
 */
async function attemptOutcome(
  ids: { nodeId: string; operationId: string },
  commandId: string,
  type: string,
  deadline: number,
  wakes: () => number,
): Promise<{ ended: RemediationProgress } | { outcome: AttemptOutcome; refuseReason: string | null }> {
  for (;;) {
    const seen = wakes();
    const check: AttemptCheck = await steps.checkAttempt({ ...ids, commandId, condition: type });
    if (check.ended) return { ended: check.ended };
    if (check.cleared) return { outcome: 'cleared', refuseReason: null };
    if (check.command === 'refused') return { outcome: 'refused', refuseReason: check.refuseReason };
    const left = deadline - Date.now();
    if (left <= 0) return { outcome: check.command === 'acked' ? 'acked' : 'timed-out', refuseReason: null };
    await condition(() => wakes() !== seen, left);
  }
}
