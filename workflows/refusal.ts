import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

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
