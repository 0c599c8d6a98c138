/** Error codes of docs/api.md; also the `type` of refusals thrown by activities and workflows. */
export const ERROR_STATUS = {
  INVALID_INPUT: 400,
  UNAUTHENTICATED: 401,
  CREDENTIAL_EXPIRED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_STATE: 409,
  NOT_SCHEDULABLE: 409,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && value in ERROR_STATUS;
}

/** How far `causeChain` follows `cause`: a bound, should a chain loop. */
const CAUSE_DEPTH = 5;

/**
 * An error and what caused it, outermost first, up to `CAUSE_DEPTH` errors: clients and drivers
 * wrap the error that says what happened (a gRPC status, the server's text, the driver's words).
 */
export function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e = error; e instanceof Error && chain.length < CAUSE_DEPTH; e = e.cause) chain.push(e);
  return chain;
}

/** The one error class: a refusal with its API code, thrown by domain rules, activities and routes. */
export class DrydockError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** What went wrong underneath, for the server's log only: never part of a response. */
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DrydockError';
  }
}
