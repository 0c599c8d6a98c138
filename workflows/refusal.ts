import { ActivityFailure, ApplicationFailure, isCancellation, setCurrentDetails } from '@temporalio/workflow';
import type { StepFailure } from '../activities/failure';
import { isErrorCode } from '../domain/errors';

/**
 * The failure an update handler throws when its activity refused: the activity's own
 * ApplicationFailure (type = API error code, details kept) rather than the ActivityFailure around it.
 */
export function asRefusal(error: unknown): ApplicationFailure {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    return ApplicationFailure.create({
      message: cause.message,
      type: cause.type ?? undefined,
      nonRetryable: true,
      details: cause.details ?? [],
    });
  }
  return ApplicationFailure.fromError(error);
}

/**
 * A step that gave up for good: its activity refused (a DrydockError, or a database error no retry
 * fixes), which reaches the workflow as an ApplicationFailure — wrapped in an ActivityFailure for
 * an activity, bare for a local one. Null for anything else, a cancellation included.
 */
export function stepFailure(error: unknown): StepFailure | null {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure) || isCancellation(error)) return null;
  const [, named] = (cause.details ?? []) as [unknown, { activity?: string } | undefined];
  return {
    code: isErrorCode(cause.type) ? cause.type : 'INTERNAL',
    reason: cause.message,
    step: named?.activity ?? (error instanceof ActivityFailure ? error.activityType : 'unknown'),
  };
}

/**
 * Runs a workflow's steps after its begin; when one gives up for good, `fail` ends the operation
 * (`failed`, with the reason, in one transaction) and the answer is 'failed' — never an operation
 * left running behind a workflow that stopped.
 */
export async function unlessGivenUp<T>(
  steps: () => Promise<T>,
  fail: (failure: StepFailure) => Promise<unknown>,
): Promise<T | 'failed'> {
  try {
    return await steps();
  } catch (error) {
    const failure = stepFailure(error);
    if (!failure) throw error;
    await fail(failure);
    setCurrentDetails(`failed in ${failure.step}: ${failure.reason}`);
    return 'failed';
  }
}
