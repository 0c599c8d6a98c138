import { DrydockError, type ErrorCode } from '../domain/errors';

/** The driver's error inside whatever wraps it (drizzle wraps Postgres errors in `cause`). */
function driverError(error: unknown): { code?: unknown; constraint_name?: unknown } | null {
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    if ('code' in current) return current as { code?: unknown };
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** The SQLSTATE of a Postgres error from the driver, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = driverError(error)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  return constraint === undefined || driverError(error)?.constraint_name === constraint;
}

/** The driver's own codes (and the socket's) for a connection it could not open or lost. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'CONNECTION_DESTROYED',
]);

/**
 * SQLSTATEs after which the same statement can succeed on a second try: the connection or the
 * server went away (08, 57P01–57P03), the server ran short of something (53), the transaction lost
 * a race (40001 serialization, 40P01 deadlock, 55P03 lock not available) or was cancelled (57014).
 */
const TRANSIENT_STATE = /^(08...|53...|57P0[123]|40001|40P01|55P03|57014)$/;

/**
 * Integrity violations (class 23). Each is about the request meeting the rows already there, so
 * the request is well-formed but collides (CONFLICT) — except a missing required value or a value
 * outside a column's check, which no state of the database would accept (INVALID_INPUT).
 */
const INTEGRITY: Record<string, { code: ErrorCode; message: string }> = {
  '23505': { code: 'CONFLICT', message: 'it already exists: a concurrent or earlier request created it' },
  '23P01': { code: 'CONFLICT', message: 'it overlaps a record that exists' },
  '23503': {
    code: 'CONFLICT',
    message: 'it refers to something that no longer exists, or something still refers to it',
  },
  '23001': { code: 'CONFLICT', message: 'something still refers to it' },
  '23502': { code: 'INVALID_INPUT', message: 'a required value is missing' },
  '23514': { code: 'INVALID_INPUT', message: 'a value is outside what is allowed' },
};

/** Check constraints that guard a node's state rather than a value: refusing them is INVALID_STATE. */
const STATE_CHECKS = new Set(['decommissioned_nodes_are_terminal']);

/** Data exceptions (class 22) by SQLSTATE; any other in the class gets the general message. */
const DATA_EXCEPTIONS: Record<string, string> = {
  '22021': 'text holds a character that cannot be stored (such as NUL)',
  '22P05': 'text holds a character that cannot be stored (such as NUL or a lone surrogate)',
  '22003': 'a number is out of range',
  '22001': 'a text value is too long',
  '22007': 'a date or time is malformed',
  '22008': 'a date or time is out of range',
  '22P02': 'a value is malformed',
};

/**
 * What a database error means for the caller, decided once from its SQLSTATE (or the driver's
 * connection code): a refusal with its API code, never worth a retry (data exceptions and
 * integrity violations); `'transient'` when the same request can succeed later (connection lost,
 * serialization failure, deadlock); null when it is not a database error this knows.
 */
export function classifyDatabaseError(error: unknown): DrydockError | 'transient' | null {
  const driver = driverError(error);
  if (typeof driver?.code === 'string' && CONNECTION_CODES.has(driver.code)) return 'transient';
  const state = sqlState(error);
  if (state === undefined) return null;
  if (TRANSIENT_STATE.test(state)) return 'transient';
  if (state.startsWith('22')) {
    const what = DATA_EXCEPTIONS[state] ?? 'a value is invalid';
    return new DrydockError('INVALID_INPUT', `the request cannot be stored: ${what}`);
  }
  if (state.startsWith('23')) {
    if (state === '23514' && STATE_CHECKS.has(String(driver?.constraint_name))) {
      return new DrydockError('INVALID_STATE', 'the node is in a state that does not allow this change');
    }
    const { code, message } = INTEGRITY[state] ?? { code: 'CONFLICT', message: 'it collides with a record' };
    return new DrydockError(code, `the request cannot be stored: ${message}`);
  }
  return null;
}
