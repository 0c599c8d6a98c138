import {
  isGrpcServiceError,
  NamespaceNotFoundError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { causeChain, DrydockError } from '../domain/errors';

/** The gRPC status code somewhere in an error's cause chain (the client wraps it once or twice). */
export function grpcCode(error: unknown): number | undefined {
  return causeChain(error).find(isGrpcServiceError)?.code;
}

/**
 * gRPC codes with which the server turned the call down before acting on it, so the request had
 * no effect: INVALID_ARGUMENT, ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED (throttled),
 * FAILED_PRECONDITION (the previous run of the id is closing), ABORTED (the update was dropped by a
 * closing run), UNIMPLEMENTED, UNAUTHENTICATED.
 */
const REFUSED_CODES = new Set([3, 6, 7, 8, 9, 10, 12, 16]);

/** CANCELLED and DEADLINE_EXCEEDED: the call's deadline passed, on the client's clock or the server's. */
const TIMED_OUT_CODES = new Set([1, 4]);

const UNAVAILABLE_CODE = 14;

const MAY_STILL_TAKE_EFFECT =
  'it may still take effect: retry it (with the same Idempotency-Key, if it had one) to learn its outcome';

/**
 * What an error of the Temporal client means for the caller, or null when it is not one. Each is
 * UNAVAILABLE (Temporal is a backing service; none of these is the caller's fault or a bug in the
 * request), and the message says only what is known: "nothing was changed" only where the server
 * refused before acting. The server's own text (which may name its address) stays out of it.
 */
export function classifyTemporalError(error: unknown): DrydockError | null {
  const code = grpcCode(error);
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || TIMED_OUT_CODES.has(code ?? -1)) {
    return unavailable(error, `Temporal did not answer in time; ${MAY_STILL_TAKE_EFFECT}`);
  }
  if (code === UNAVAILABLE_CODE) {
    return unavailable(error, `Temporal is unreachable; ${MAY_STILL_TAKE_EFFECT}`);
  }
  if (
    REFUSED_CODES.has(code ?? -1) ||
    error instanceof NamespaceNotFoundError ||
    error instanceof WorkflowExecutionAlreadyStartedError
  ) {
    return unavailable(error, 'Temporal refused the request right now; nothing was changed, retry it');
  }
  if (
    error instanceof WorkflowUpdateFailedError ||
    error instanceof WorkflowFailedError ||
    error instanceof WorkflowNotFoundError
  ) {
    return unavailable(error, `the workflow could not take the request; ${MAY_STILL_TAKE_EFFECT}`);
  }
  if (error instanceof ServiceError || code !== undefined) {
    return unavailable(error, `Temporal failed the request; ${MAY_STILL_TAKE_EFFECT}`);
  }
  return null;
}

function unavailable(cause: unknown, message: string): DrydockError {
  return new DrydockError('UNAVAILABLE', message, {}, { cause });
}
