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

/** Temporal client errors that mean the server or its workers cannot be reached. */
function isTemporalUnavailable(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'ServiceError' || name === 'TransportError' || name === 'ConnectionError';
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
