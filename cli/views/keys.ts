import type { Schemas } from '@drydock/client';
import { fields, table } from '../output';

/** An API key as `/v1/keys` shows it; `secret` only when it was just made. */
export type ApiKey = Schemas['ApiKey'] & {
  secret?: string;
  /** On a rotation: the key it replaces, accepted until its `revokedAt`. */
  previous?: Schemas['ApiKey'];
};

/** `operator`, or the tenant a tenant key is bound to. */
const keyRole = (k: ApiKey) => (k.tenantId ? `tenant ${k.tenantId}` : 'operator');

/** When a key stops being accepted: `-` (it does not), or a time, marked once it has passed. */
function keyRevoked(k: Pick<ApiKey, 'revokedAt'>, now: Date): string {
  if (!k.revokedAt) return '-';
  return Date.parse(k.revokedAt) > now.getTime() ? `${k.revokedAt} (grace)` : k.revokedAt;
}

export function keysTable(keys: readonly ApiKey[], now: Date = new Date()): string {
  return table(
    ['ID', 'NAME', 'ROLE', 'ACTIONS', 'CREATED', 'REVOKED'],
    keys.map((k) => [
      k.id,
      k.name,
      keyRole(k),
      k.tenantId ? k.actions.join(',') : 'all',
      k.createdAt,
      keyRevoked(k, now),
    ]),
  );
}

/** A key's fields; with its secret (on creation and rotation), and the key a rotation replaces. */
export function keyDetails(k: ApiKey, now: Date = new Date()): string {
  const details = fields([
    ['ID', k.id],
    ['Name', k.name],
    ['Role', keyRole(k)],
    ['Actions', k.tenantId ? k.actions.join(', ') : 'all'],
    ['Created', k.createdAt],
    ...(k.revokedAt ? ([['Revoked', keyRevoked(k, now)]] as const) : []),
    ...(k.previous
      ? ([['Replaces', `${k.previous.id}, accepted until ${k.previous.revokedAt ?? '-'}`]] as const)
      : []),
    ...(k.secret ? ([['Secret', k.secret]] as const) : []),
  ]);
  if (!k.secret) return details;
  return `${details}\n\nThe secret is shown only this once: store it now (keys list never shows it).`;
}
