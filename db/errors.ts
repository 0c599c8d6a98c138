/** The SQLSTATE of a Postgres error from the driver, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  return constraint === undefined || (error as { constraint_name?: string }).constraint_name === constraint;
}

/** True for errors that mean the database cannot be reached (not a bug, not bad input). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'CONNECTION_CLOSED',
      'CONNECTION_ENDED',
      'CONNECT_TIMEOUT',
      'CONNECTION_DESTROYED',
    ].includes(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P03'
  );
}
