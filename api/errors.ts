import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { DrydockError, ERROR_STATUS, type ErrorCode } from '../domain/errors';
import { classifyDatabaseError } from '../db/errors';
import type { AppDeps } from './env';

/** The error envelope of docs/api.md. */
export function errorBody(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown>,
  requestId: string,
) {
  return { error: { code, message, details, requestId } };
}

/** What an error means for the caller: its refusal, or UNAVAILABLE, or INTERNAL for a bug. */
function failureOf(error: unknown): DrydockError {
  if (error instanceof DrydockError) return error;
  // Hono's own refusals (malformed JSON, oversized bodies) are bad input.
  if (error instanceof HTTPException && error.status < 500) {
    return new DrydockError('INVALID_INPUT', error.message || 'malformed request');
  }
  const database = classifyDatabaseError(error);
  if (database === 'transient') {
    return new DrydockError(
      'UNAVAILABLE',
      'the database could not complete the request; retry it',
      {},
      {
        cause: error,
      },
    );
  }
  return database ?? new DrydockError('INTERNAL', 'internal error');
}

/**
 * The one place an error becomes a response: known refusals keep their code; nothing leaks. What
 * the backing service said (its address, its stack) is logged with the request id, never sent.
 */
export function toResponse(error: unknown, c: Context) {
  const requestId: string = c.get('requestId') ?? 'unknown';
  const failure = failureOf(error);
  if (ERROR_STATUS[failure.code] >= 500 && (failure !== error || failure.cause !== undefined)) {
    // Written under the request's log scope, so the line carries its request id. (A bare app —
    // the tests of this mapping alone — has no deps and logs nothing.)
    const deps: AppDeps | undefined = c.get('deps');
    deps?.log.error({ code: failure.code, err: failure.cause ?? error }, failure.message);
  }
  return c.json(
    errorBody(failure.code, failure.message, failure.details, requestId),
    ERROR_STATUS[failure.code],
  );
}
