import { monotonicFactory } from 'ulid';

/** Prefixes of the identifiers Drydock mints (docs/api.md, Identifiers). */
export type IdPrefix = 'node' | 'op' | 'alloc' | 'jt' | 'key' | 'cred' | 'cmd' | 'acc' | 'sr' | 'inv' | 'art';

const ULID_BODY = '[0-9a-hjkmnp-tv-z]{26}';
const patterns: Record<IdPrefix, RegExp> = {
  node: new RegExp(`^node_${ULID_BODY}$`),
  op: new RegExp(`^op_${ULID_BODY}$`),
  alloc: new RegExp(`^alloc_${ULID_BODY}$`),
  jt: new RegExp(`^jt_${ULID_BODY}$`),
  key: new RegExp(`^key_${ULID_BODY}$`),
  cred: new RegExp(`^cred_${ULID_BODY}$`),
  cmd: new RegExp(`^cmd_${ULID_BODY}$`),
  acc: new RegExp(`^acc_${ULID_BODY}$`),
  sr: new RegExp(`^sr_${ULID_BODY}$`),
  inv: new RegExp(`^inv_${ULID_BODY}$`),
  art: new RegExp(`^art_${ULID_BODY}$`),
};

/**
 * ULIDs that grow, also within one millisecond (the random part counts up): what one process
 * mints sorts in the order it was minted, so a listing by id is in creation order.
 */
const ulid = monotonicFactory();

/** A fresh identifier: prefix, underscore, lowercase ULID. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return patterns[prefix].test(value);
}

export function idPattern(prefix: IdPrefix): RegExp {
  return patterns[prefix];
}

/** Tenant, pool and site names: 1–63 of a-z 0-9 -, starting with a letter. */
export const SLUG_PATTERN = /^[a-z][a-z0-9-]{0,62}$/;
