import { parseDuration } from './duration';
import type { PoolPolicy } from './pool';

/**
 * A node credential's lifetime and its renewal (docs/lifecycle/enrollment.md#credential-renewal):
 * the rules the API and the agent share.
 */

/** A credential's lifetime when its pool sets no `credentialTtl` (and for pending nodes). */
export const DEFAULT_CREDENTIAL_TTL_MS = 24 * 3_600_000;
/** The lifetime of the credentials of a pool's nodes (none: a pending node's). */
export function credentialTtlMs(policy: PoolPolicy | undefined): number {
  return (policy?.credentialTtl && parseDuration(policy.credentialTtl)) || DEFAULT_CREDENTIAL_TTL_MS;
}

/** The bounds of a pool's `credentialTtl`. */
export const MIN_CREDENTIAL_TTL_MS = 10_000;
export const MAX_CREDENTIAL_TTL_MS = 30 * 86_400_000;

/** How long a renewed credential keeps working when its successor is never used. */
export const RENEWAL_OVERLAP_MS = 10 * 60_000;
/** How long a renewal nonce may be signed and sent back. */
export const RENEWAL_NONCE_TTL_MS = 60_000;

/** When an agent renews: two thirds into the credential's life. */
export function renewAfter(issuedAt: Date, expiresAt: Date): Date {
  return new Date(issuedAt.getTime() + ((expiresAt.getTime() - issuedAt.getTime()) * 2) / 3);
}

/**
 * The bytes a node signs with its Ed25519 key to renew its credential: the nonce the API handed
 * out, bound to the cluster and the node, behind a label no other signed message of Drydock has.
 */
export function renewalMessage(input: { clusterId: string; nodeId: string; nonce: string }): Buffer {
  return Buffer.from(
    `drydock-credential-renewal\n${input.clusterId}\n${input.nodeId}\n${input.nonce}`,
    'utf8',
  );
}
