import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { renewalMessage } from '../domain/credentials';
import type { AgentClient } from './client';

/** What renews the node credential: the node's private key, and where the new credential is kept. */
export interface Renewal {
  privateKey: KeyObject;
  /** Stores the new credential (identity.json) before it is used; throws when it cannot. Absent: memory only. */
  persist?: (credential: string) => void;
}

export function renewalWith(privateKeyPem: string, persist?: (credential: string) => void): Renewal {
  return { privateKey: createPrivateKey(privateKeyPem), ...(persist ? { persist } : {}) };
}

/**
 * Renews the credential with proof of the node's key (docs/lifecycle/enrollment.md#credential-renewal):
 * a nonce from the API, signed, sent back for a new credential, which is stored and then used. A
 * failure anywhere leaves the old credential in use (the API keeps it working until the new one is
 * first used), and the next try revokes a new one never used.
 */
export async function renewCredential(
  client: AgentClient,
  node: { nodeId: string; clusterId: string },
  renewal: Renewal,
  signal?: AbortSignal,
): Promise<string> {
  const nonce = await client.renewalNonce(signal);
  const signature = sign(null, renewalMessage({ ...node, nonce }), renewal.privateKey).toString('base64');
  const renewed = await client.renewCredential({ nonce, signature }, signal);
  renewal.persist?.(renewed.credential);
  client.useCredential(renewed.credential);
  return renewed.expiresAt;
}
