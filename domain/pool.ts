import type { AcceptancePolicy } from './acceptance';
import type { RemediationPolicy } from './remediation';

/** A pool's policy (docs/api.md, Pools): what is not set takes its default. */
export interface PoolPolicy {
  lostAfter?: string;
  /** How long a node credential lives before its agent must have renewed it (default 24h). */
  credentialTtl?: string;
  maxUnavailable?: number | string;
  maxUnhealthy?: number | string;
  /** Ladders, attempt timeouts and healthyAfter per condition type (docs/lifecycle/remediation.md). */
  remediation?: RemediationPolicy;
  /** What acceptance runs before a node is adopted (docs/lifecycle/enrollment.md#acceptance). */
  acceptance?: AcceptancePolicy;
}

/** What `PATCH /v1/pools/{id}` may change: the grants and the policy. */
export interface PoolSettings {
  grants: string[];
  policy: PoolPolicy;
}

/** A JSON value as a merge patch reads it. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `patch` applied to `target` as a JSON merge patch (RFC 7396): an object merges key by key, a
 * `null` removes its key, anything else (arrays too) replaces the value. `target` is not changed.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * The smallest merge patch that turns `from` into `to` (both objects): only what differs, a
 * removed key as `null`; `{}` when they are the same. Key order does not count (Postgres' jsonb
 * does not keep it).
 */
export function patchBetween(from: object, to: object): Record<string, Json> {
  const patch: Record<string, Json> = {};
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    const before = (from as Record<string, unknown>)[key];
    const after = (to as Record<string, unknown>)[key];
    if (after === undefined) {
      if (before !== undefined) patch[key] = null;
    } else if (isObject(before) && isObject(after)) {
      const inner = patchBetween(before, after);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (!sameJson(before, after)) {
      patch[key] = after as Json;
    }
  }
  return patch;
}

/** Whether two JSON values are equal, whatever the order of their objects' keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]))
    );
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]))
    );
  }
  return a === b;
}
