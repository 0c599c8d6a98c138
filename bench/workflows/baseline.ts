import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';

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
