import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  PURGE_CHECKS_PER_RUN,
  beginPurgeUpdate,
  purgeAnsweredSignal,
  purgeProgressQuery,
  type BeginInput,
  type PurgeInput,
  type PurgeProgress,
  type PurgeRequest,
} from './definitions';
import { awaitBegin, serveBegin } from './begin';
import { cleanUpOnCancel } from './cancellation';
import { unlessGivenUp } from './refusal';

const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** How often the purge looks at its command without a signal (a lost signal costs at most this). */
const RECHECK = '1 minute';

/**
 * Guards continuing as new after `PURGE_CHECKS_PER_RUN` looks: a purge recorded before it looked
 * for as long as it took in one run, and replays that way.
 */
const CONTINUE_AS_NEW_PATCH = 'purge-continue-as-new';

type PurgeOutcome = 'purged' | 'cancelled' | 'failed' | 'refused' | 'never-began';

/**
 * purge/<nodeId>: the signed command is queued by `begin`; the workflow waits, as long as it takes,
 * for the node's answer. Ack → the node is forgotten (`node.purged`); refusal → it stays purging;
 * a DELETE of the purging node ends it `cancelled`. A long wait continues as new every
 * `PURGE_CHECKS_PER_RUN` looks, carrying its operation and since when it waits.
 */
export async function purge(input: PurgeInput): Promise<PurgeOutcome> {
  return cleanUpOnCancel(() => purgeUntilAnswered(input));
}

async function purgeUntilAnswered(input: PurgeInput): Promise<PurgeOutcome> {
  let answers = 0;
  const progress: PurgeProgress = {
    phase: 'starting',
    commandId: null,
    refusedReason: null,
    waitingSince: null,
  };
  setHandler(purgeProgressQuery, () => progress);
  setHandler(purgeAnsweredSignal, () => void answers++);
  const begin = (request: BeginInput<PurgeRequest>) => steps.beginPurge(request);
  let opId: string;
  if (input.resume) {
    // Continued as new: the purge has begun; a begin sent now joins it, as in the first run.
    serveBegin(beginPurgeUpdate, input.nodeId, begin);
    opId = input.resume.operationId;
  } else {
    const start = await awaitBegin(beginPurgeUpdate, input.nodeId, begin);
    if (start.begun === null) return start.outcome;
    opId = start.begun.operation.id;
  }

  progress.phase = 'waiting-for-node';
  const waitingSince = input.resume?.waitingSince ?? new Date().toISOString();
  progress.waitingSince = waitingSince;
  const checksPerRun = input.continueAsNewAfter ?? PURGE_CHECKS_PER_RUN;
  const outcome = await unlessGivenUp(
    async (): Promise<'purged' | 'cancelled' | 'continue'> => {
      for (let checks = 1; ; checks++) {
        const seen = answers;
        const check = await steps.checkPurge({ nodeId: input.nodeId, operationId: opId });
        if (check.state === 'deleted') {
          await steps.cancelPurge({ operationId: opId });
          progress.phase = 'cancelled';
          setCurrentDetails('cancelled: the node was deleted while purging');
          return 'cancelled';
        }
        progress.commandId = check.commandId;
        if (check.state === 'acked') {
          await steps.forgetPurgedNode({ nodeId: input.nodeId, operationId: opId });
          progress.phase = 'purged';
          setCurrentDetails('purged: the node acknowledged and was forgotten');
          return 'purged';
        }
        if (check.state === 'refused') {
          progress.phase = 'refused';
          progress.refusedReason = check.refuseReason;
          setCurrentDetails(
            `the node refused the purge (${check.refuseReason ?? 'no reason'}); it stays purging until DELETE`,
          );
        } else {
          setCurrentDetails(
            `waiting for node ${input.nodeId} to acknowledge purge command ${check.commandId ?? '?'} ` +
              `(since ${waitingSince.slice(0, 19)}Z; it is delivered when the node polls)`,
          );
        }
        await condition(() => answers !== seen, RECHECK);
        const longEnough = checks >= checksPerRun || workflowInfo().continueAsNewSuggested;
        if (longEnough && patched(CONTINUE_AS_NEW_PATCH)) return 'continue';
      }
    },
    (failure) => steps.failOperation({ nodeId: input.nodeId, operationId: opId, failure }),
  );
  if (outcome === 'continue') {
    // The next run looks at the command first, so an answer that woke this one is not lost.
    await condition(allHandlersFinished);
    return continueAsNew<typeof purge>({ ...input, resume: { operationId: opId, waitingSince } });
  }
  if (outcome === 'failed') progress.phase = 'failed';
  return outcome;
}
