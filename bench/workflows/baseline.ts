import { condition, defineSignal, proxyActivities, setHandler, startChild } from '@temporalio/workflow';

/** The one signal the baselines wait for. */
export const goSignal = defineSignal('go');

/** The baseline worker's only activity: returns at once. */
export interface BaselineActivities {
  noop(): Promise<void>;
}

const { noop } = proxyActivities<BaselineActivities>({ startToCloseTimeout: '30 seconds' });

/**
 * The baseline a drain is measured against: the bare cost of a signal waking a waiting workflow
 * that then completes, on the same Temporal server, with no activity and no database.
 */
export async function signalRoundTrip(): Promise<void> {
  let signalled = false;
  setHandler(goSignal, () => void (signalled = true));
  await condition(() => signalled);
}

/**
 * A reference between the two: the same wake-up with one empty activity after it, the Temporal
 * hops a drain makes (signal, workflow task, activity, workflow task) without Drydock's SQL.
 */
export async function signalActivityRoundTrip(): Promise<void> {
  let signalled = false;
  setHandler(goSignal, () => void (signalled = true));
  await condition(() => signalled);
  await noop();
}

/** Returns at once: the child the start-rate baseline starts. */
export async function empty(): Promise<void> {}

/**
 * The baseline of a pool drain's child starts: `n` empty children started from one workflow,
 * `wave` side by side at a time (as a pool drain starts a wave), on the same Temporal server.
 */
export async function startEmptyChildren(input: { prefix: string; n: number; wave: number }): Promise<void> {
  for (let first = 0; first < input.n; first += input.wave) {
    const wave = Array.from({ length: Math.min(input.wave, input.n - first) }, (_, i) => first + i);
    await Promise.all(
      wave.map((i) =>
        startChild(empty, { workflowId: `${input.prefix}/${i}`, parentClosePolicy: 'ABANDON' }),
      ),
    );
  }
}
