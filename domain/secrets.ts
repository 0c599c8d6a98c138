import { hash, randomBytes } from 'node:crypto';

/** SHA-256 hex of a secret: what Drydock stores of API keys, join tokens and node credentials. */
export function hashSecret(secret: string): string {
  // One call, without a Hash object: this runs on every authenticated request.
  return hash('sha256', secret, 'hex');
}

/** A new secret: 32 random bytes, base64url, behind a prefix that says what it is. */
export function newSecret(prefix: 'ddk' | 'ddo' | 'ddj' | 'ddn'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}
