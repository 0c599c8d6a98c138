import type { Schemas } from '@drydock/client';
import { dash, fields, table } from '../output';

/** A join token (docs/lifecycle/enrollment.md); `secret` only in the answer to its creation. */
export type JoinToken = Schemas['JoinToken'] & { secret?: string };

/** `2/5`, or `2/∞` when uses are unlimited (`maxUses` 0). */
export const tokenUses = (t: Pick<JoinToken, 'uses' | 'maxUses'>) =>
  `${t.uses}/${t.maxUses === 0 ? '∞' : t.maxUses}`;

/** The expiry, `never`, or the expiry marked `(expired)` once it has passed. */
export function tokenExpiry(t: Pick<JoinToken, 'expiresAt'>, now: Date = new Date()): string {
  if (!t.expiresAt) return 'never';
  return Date.parse(t.expiresAt) <= now.getTime() ? `${t.expiresAt} (expired)` : t.expiresAt;
}

export function tokensTable(tokens: readonly JoinToken[], now: Date = new Date()): string {
  return table(
    ['ID', 'POOL', 'TENANT', 'USES', 'EXPIRES', 'REVOKED', 'DESCRIPTION'],
    tokens.map((t) => [
      t.id,
      t.poolId,
      dash(t.tenantId),
      tokenUses(t),
      tokenExpiry(t, now),
      dash(t.revokedAt),
      dash(t.description),
    ]),
  );
}

/** A token's fields; with its secret (only on creation), and the warning that it is shown once. */
export function tokenDetails(t: JoinToken, now: Date = new Date()): string {
  const labels = Object.entries(t.labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
  const details = fields([
    ['ID', t.id],
    ['Pool', t.poolId],
    ['Tenant', dash(t.tenantId)],
    ['Expires', tokenExpiry(t, now)],
    ['Uses', tokenUses(t)],
    ['Labels', dash(labels)],
    ['Description', dash(t.description)],
    ...(t.revokedAt ? ([['Revoked', t.revokedAt]] as const) : []),
    ...(t.secret ? ([['Secret', t.secret]] as const) : []),
  ]);
  if (!t.secret) return details;
  return `${details}\n\nThe secret is shown only this once: store it now (token list never shows it).`;
}
