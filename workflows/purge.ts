import { condition, proxyLocalActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { beginUpdate, purgeAnsweredSignal, purgeProgressQuery, type PurgeProgress } from './definitions';
import { awaitBegin } from './begin';
import { cleanUpOnCancel } from './cancellation';
import { unlessGivenUp } from './refusal';

const steps = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** How often the purge looks at its command without a signal (a lost signal costs at most this). */
const RECHECK = '1 minute';

/**
 * purge/<nodeId>: the signed command is queued by `begin`; the workflow waits, as long as it takes,
 * for the node's answer. Ack → the node is forgotten (`node.purged`); refusal → it stays purging;
 * a DELETE of the purging node ends it `cancelled`.
 */
export async function purge(input: {
  nodeId: string;
}): Promise<'purged' | 'cancelled' | 'failed' | 'refused' | 'never-began'> {
  return cleanUpOnCancel(() => purgeUntilAnswered(input));
}

async function purgeUntilAnswered(input: {
  nodeId: string;
}): Promise<'purged' | 'cancelled' | 'failed' | 'refused' | 'never-began'> {
  let answers = 0;
  const progress: PurgeProgress = {
    phase: 'starting',
    commandId: null,
    refusedReason: null,
    waitingSince: null,
  };
  setHandler(purgeProgressQuery, () => progress);
  setHandler(purgeAnsweredSignal, () => void answers++);
  const start = await awaitBegin(beginUpdate, input.nodeId, (request) => steps.beginPurge(request));
  if (start.begun === null) return start.outcome;
  const opId = start.begun.operation.id;

  progress.phase = 'waiting-for-node';
  const waitingSince = new Date().toISOString();
  progress.waitingSince = waitingSince;
  const outcome = await unlessGivenUp(
    async (): Promise<'purged' | 'cancelled'> => {
      for (;;) {
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
      }
    },
    (failure) => steps.failOperation({ nodeId: input.nodeId, operationId: opId, failure }),
  );
  if (outcome === 'failed') progress.phase = 'failed';
  return outcome;
}
