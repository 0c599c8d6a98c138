import { continueAsNew, proxyActivities, setCurrentDetails, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { stepFailure } from './refusal';
import { livenessProgressQuery, type LivenessProgress, type LivenessSweepInput } from './definitions';

/** How long one sweep may take before Temporal gives it to another worker (its worker died). */
const SWEEP_TIMEOUT_MS = 30_000;
/** Every this many sweeps the controller also closes operations whose workflow closed without them. */
const RECONCILE_EVERY = 6;

/**
 * liveness-sweep: the one liveness controller; a sweep every few seconds, one transaction each, and
 * every few sweeps a reconcile pass (activities/cancel.ts) for workflows terminated in Temporal.
 */
export async function livenessSweep(input: LivenessSweepInput): Promise<void> {
  const progress: LivenessProgress = {
    sweeps: 0,
    lastSweepAt: null,
    lastResult: null,
    nextSweepAt: null,
    lastFailure: null,
  };
  setHandler(livenessProgressQuery, () => progress);
  const { sweepLiveness, reconcileClosedOperations } = proxyActivities<Activities>({
    startToCloseTimeout: input.sweepTimeoutMs ?? SWEEP_TIMEOUT_MS,
    retry: { initialInterval: '1 second', maximumInterval: '5 seconds' },
  });
  const limit = input.continueAsNewAfter ?? 500;
  for (let i = 0; i < limit; i++) {
    const result = await sweepLiveness(input.settings).catch((error: unknown) => {
      // A sweep that gave up must not end the one liveness controller: the next sweep tries afresh.
      const failure = stepFailure(error);
      if (!failure) throw error;
      return failure;
    });
    if ('code' in result) {
      progress.lastFailure = { code: result.code, reason: result.reason, at: new Date().toISOString() };
      setCurrentDetails(
        `sweep failed (${result.code}: ${result.reason}); next in ${input.settings.sweepEveryMs / 1000}s`,
      );
      await sleep(input.settings.sweepEveryMs);
      continue;
    }
    if (i % RECONCILE_EVERY === RECONCILE_EVERY - 1) {
      // A pass that gave up is tried again with the next one; it must not stop the sweeps.
      await reconcileClosedOperations({}).catch((error: unknown) => {
        if (!stepFailure(error)) throw error;
      });
    }
    const now = Date.now();
    progress.sweeps++;
    progress.lastSweepAt = new Date(now).toISOString();
    progress.lastResult = {
      disconnected: result.disconnected,
      unreachable: result.unreachable,
      lost: result.lost,
      graceUntil: result.graceUntil,
    };
    progress.nextSweepAt = new Date(now + input.settings.sweepEveryMs).toISOString();
    const grace =
      result.graceUntil && Date.parse(result.graceUntil) > now
        ? `; grace until ${result.graceUntil.slice(11, 19)}Z`
        : '';
    setCurrentDetails(
      `last sweep ${progress.lastSweepAt.slice(11, 19)}Z: ${result.unreachable} unreachable, ` +
        `${result.disconnected} disconnected, ${result.lost} lost${grace}; next in ${input.settings.sweepEveryMs / 1000}s`,
    );
    await sleep(input.settings.sweepEveryMs);
  }
  await continueAsNew<typeof livenessSweep>(input);
}
