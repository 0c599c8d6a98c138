import { parseDuration } from './duration';
import { DrydockError } from './errors';

/** When a token with this ttl expires, from `now`; null for `0` (never). */
export function tokenExpiry(ttl: string, now: Date): Date | null {
  const ms = parseDuration(ttl);
  if (ms === null)
    throw new DrydockError('INVALID_INPUT', `ttl ${ttl} is not a duration such as 24h, 30m or 0`);
  return ms === 0 ? null : new Date(now.getTime() + ms);
}

/** Uses left of a token, or null when unlimited (`maxUses` 0). */
export function usesLeft(token: { maxUses: number; uses: number }): number | null {
  return token.maxUses === 0 ? null : Math.max(0, token.maxUses - token.uses);
}
