import { isGrpcDeadlineError, isGrpcServiceError, ServiceError } from '@temporalio/client';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { DrydockError, ERROR_STATUS, type ErrorCode } from '../domain/errors';
import { isConnectionError } from '../db/errors';

/** The error envelope of spec/api.md. */
export function errorBody(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown>,
  requestId: string,
) {
  return { error: { code, message, details, requestId } };
}

/** gRPC status codes that mean Temporal could not be reached or did not answer in time. */
const UNREACHABLE_GRPC_CODES = new Set([
  1, // CANCELLED
  4, // DEADLINE_EXCEEDED
  14, // UNAVAILABLE
]);

/** Temporal client errors that mean the server cannot be reached (not a bug, not bad input). */
export function isTemporalUnavailable(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  return (
    isGrpcDeadlineError(cause) ||
    (isGrpcServiceError(cause) && UNREACHABLE_GRPC_CODES.has(cause.code)) ||
    (error as { name?: unknown } | null)?.name === 'TransportError'
  );
}

/** The one place an error becomes a response: known refusals keep their code; nothing leaks. */
export function toResponse(error: unknown, c: Context) {
  const requestId: string = c.get('requestId') ?? 'unknown';
  let failure: DrydockError;
  if (error instanceof DrydockError) {
    failure = error;
  } else if (error instanceof HTTPException && error.status < 500) {
    // Hono's own refusals (malformed JSON, oversized bodies) are bad input.
    failure = new DrydockError('INVALID_INPUT', error.message || 'malformed request');
  } else if (isConnectionError(error) || isTemporalUnavailable(error)) {
    failure = new DrydockError('UNAVAILABLE', 'a backing service is unreachable; nothing was changed');
  } else {
    console.error(`[${requestId}] internal error`, error);
    failure = new DrydockError('INTERNAL', 'internal error');
  }
  return c.json(
    errorBody(failure.code, failure.message, failure.details, requestId),
    ERROR_STATUS[failure.code],
  );
}
