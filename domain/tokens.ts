import { parseDuration } from './duration';
import { DrydockError } from './errors';

/** The longest a join token may live; longer is a typo, and `0` says "never" on purpose. */
const MAX_TTL_MS = 3650 * 86_400_000;

/** When a token with this ttl expires, from `now`; null only for the literal `0` (never). */
export function tokenExpiry(ttl: string, now: Date): Date | null {
  if (ttl === '0') return null;
  const ms = parseDuration(ttl);
  if (ms === null || ms <= 0 || ms > MAX_TTL_MS) {
    throw new DrydockError(
      'INVALID_INPUT',
      `ttl ${ttl} must be 0 (never) or a duration from 1ms to 3650d, such as 24h or 30m`,
    );
  }
  return new Date(now.getTime() + ms);
}

/** Uses left of a token, or null when unlimited (`maxUses` 0). */
export function usesLeft(token: { maxUses: number; uses: number }): number | null {
  return token.maxUses === 0 ? null : Math.max(0, token.maxUses - token.uses);
}
