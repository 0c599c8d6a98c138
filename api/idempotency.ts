import { createHash } from 'node:crypto';
import { idempotencyScope, type Principal } from '../domain/principal';

/** SHA-256 over a request's canonical JSON: what an Idempotency-Key is bound to. */
export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A request's Idempotency-Key as its record keeps it: the caller it belongs to, the key, and the
 * hash of what it binds (the kind of operation, its subject, and the request's own fields). The
 * same caller, key and request again is answered with the recorded operation; another request under
 * the key is IDEMPOTENCY_KEY_REUSED (docs/api.md). No key: none.
 */
export function idempotencyOf(
  principal: Principal,
  key: string | null | undefined,
  binds: { route: string } & Record<string, unknown>,
): { scope: string; key: string; hash: string } | null {
  if (!key) return null;
  return { scope: idempotencyScope(principal), key, hash: requestHash(binds) };
}
