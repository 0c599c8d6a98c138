import type { AgentClient } from './client';
import { newKeyPair, prepareDataDir, writeIdentity, writePrivateKey, type Identity } from './identity';
import type { Inventory } from './inventory';

export interface JoinRequest {
  token?: string;
  hostname: string;
  displayName?: string;
  /** A pool hint for a join without a token (the operator's approval may follow it). */
  poolId?: string;
  inventory: Inventory;
}

export interface Joined {
  identity: Identity;
  /** `adopted` with a valid token; `pending` without one, until an operator approves. */
  provisionState: string;
  /** The node's Ed25519 private key (PKCS8 PEM): it signs credential renewals. */
  privateKeyPem: string;
}

/**
 * Joins the cluster as a new node with a fresh Ed25519 key pair (docs/agent.md, join).
 * With `dataDir`, the private key is on disk before the API hears of it and the identity is
 * written once the API answered; without, the identity lives in memory (simulated agents).
 */
export async function joinCluster(
  client: AgentClient,
  request: JoinRequest,
  dataDir?: string,
): Promise<Joined> {
  const keys = newKeyPair();
  if (dataDir) {
    prepareDataDir(dataDir);
    writePrivateKey(dataDir, keys.privateKeyPem);
  }
  const answer = await client.join({ ...request, publicKey: keys.publicKeyPem });
  const identity: Identity = {
    nodeId: answer.nodeId,
    credential: answer.credential,
    clusterId: answer.clusterId,
    caPublicKey: answer.caPublicKey,
    api: client.api,
    joinedAt: new Date().toISOString(),
  };
  if (dataDir) writeIdentity(dataDir, identity);
  return { identity, provisionState: answer.provisionState, privateKeyPem: keys.privateKeyPem };
}
