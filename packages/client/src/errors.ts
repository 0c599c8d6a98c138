/**
 * The API answered with an error: its error envelope (docs/api.md, Errors), or `BAD_RESPONSE` when
 * the answer was not Drydock JSON (a proxy's error page, an empty body).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API could not be reached, the connection broke before it answered, or it did not answer in time. */
export class Unreachable extends Error {
  constructor(
    /** The base URL the call went to. */
    readonly baseUrl: string,
    /** The low-level reason, e.g. `ECONNREFUSED` or `no answer within 30s`; empty when unknown. */
    readonly detail: string,
  ) {
    super(`cannot reach ${new URL(baseUrl).origin}${detail ? ` (${detail})` : ''}`);
    this.name = 'Unreachable';
  }
}

interface Envelope {
  error: { code: string; message: string; details?: Record<string, unknown>; requestId?: string };
}

function isEnvelope(value: unknown): value is Envelope {
  const error = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

/** The `ApiError` of an error answer: `body` is its parsed JSON, or its text when it was not JSON. */
export function refusalOf(request: Request, status: number, body: unknown): ApiError {
  if (isEnvelope(body)) {
    const { code, message, details, requestId } = body.error;
    return new ApiError(status, code, message, details ?? {}, requestId);
  }
  return badResponse(request, status);
}

export function badResponse(request: Request, status: number): ApiError {
  const { pathname } = new URL(request.url);
  return new ApiError(
    status,
    'BAD_RESPONSE',
    `${request.method} ${pathname} answered ${status} without Drydock JSON`,
  );
}

/** The low-level reason a fetch failed, e.g. `ECONNREFUSED`. */
export function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return '';
}
