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

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'CONNECTION_DESTROYED',
  '57P01', // admin shutdown
  '57P03', // cannot connect now
]);

/** True for errors that mean the database cannot be reached (not a bug, not bad input). */
export function isConnectionError(error: unknown): boolean {
  const code = driverError(error)?.code;
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code));
}
