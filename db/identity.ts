import { createHash, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES } from '../domain/command-status';
import type { RevokedIdentity } from '../domain/controls';
import { DrydockError } from '../domain/errors';
import { newId } from '../domain/ids';
import { hashSecret, newSecret } from '../domain/secrets';
import type { DbOrTx, Tx } from './client';
import { isUniqueViolation } from './errors';
import { nodeCertificates, nodeCredentials, nodeCommands, nodePublicKeys, nodes } from './schema';

/**
 * A public key as the bytes it is, whatever its PEM spelling (line width, CRLF, final newline):
 * the SHA-256 of its SubjectPublicKeyInfo DER, and the canonical PEM of that DER.
 */
function publicKeyOf(publicKeyPem: string): { spkiSha256: string; pem: string } {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: publicKeyPem, format: 'pem' });
  } catch {
    throw new DrydockError('INVALID_INPUT', 'publicKey must be a public key in PEM (SubjectPublicKeyInfo)');
  }
  const der = key.export({ type: 'spki', format: 'der' });
  return {
    spkiSha256: createHash('sha256').update(der).digest('hex'),
    pem: key.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Issues a certificate for the public key and a node credential, both living `ttlMs`; returns the
 * credential secret once. The key becomes the node's for good: a key any node ever held (revoked,
 * deleted, decommissioned or live, and however its PEM is spelled) is refused, by the unique key of
 * `node_public_keys`, so of concurrent joins with one key exactly one commits.
 */
export async function issueIdentity(
  tx: Tx,
  node: { id: string; identityGeneration: number },
  publicKeyPem: string,
  ttlMs: number,
): Promise<{ credential: string; serial: string; expiresAt: Date }> {
  const key = publicKeyOf(publicKeyPem);
  try {
    await tx.insert(nodePublicKeys).values({ spkiSha256: key.spkiSha256, nodeId: node.id });
  } catch (error) {
    if (!isUniqueViolation(error, 'node_public_keys_pkey')) throw error;
    throw new DrydockError(
      'UNAUTHENTICATED',
      'this public key already belongs to a node identity; join with a new key',
      { reason: 'public-key-reused' },
    );
  }
  return issueCredential(tx, node, key.pem, ttlMs);
}

/**
 * A certificate of the node's public key and a credential, both new, both ending `ttlMs` from now
 * (`renewedFrom`: the credential this one renews). Returns the credential secret once.
 */
export async function issueCredential(
  tx: Tx,
  node: { id: string; identityGeneration: number },
  publicKeyPem: string,
  ttlMs: number,
  renewedFrom: string | null = null,
): Promise<{ credential: string; serial: string; expiresAt: Date }> {
  const serial = randomBytes(16).toString('hex');
  const credential = newSecret('ddn');
  const now = new Date();
  const expiresAt = new Date(now.getTime() + ttlMs);
  await tx.insert(nodeCertificates).values({
    serial,
    nodeId: node.id,
    publicKey: publicKeyPem,
    identityGeneration: node.identityGeneration,
    issuedAt: now,
    expiresAt,
  });
  await tx.insert(nodeCredentials).values({
    id: newId('cred'),
    nodeId: node.id,
    secretHash: hashSecret(credential),
    identityGeneration: node.identityGeneration,
    createdAt: now,
    expiresAt,
    renewedFrom,
  });
  return { credential, serial, expiresAt };
}

/**
 * Revokes every live certificate and credential of a node with `reason`; returns how many of each
 * it revoked. Call inside the transaction of the change that revokes them.
 */
export async function revokeIdentity(tx: Tx, nodeId: string, reason: string): Promise<RevokedIdentity> {
  const certificates = await tx
    .update(nodeCertificates)
    .set({ revokedAt: sql`now()`, revokedReason: reason })
    .where(and(eq(nodeCertificates.nodeId, nodeId), isNull(nodeCertificates.revokedAt)))
    .returning({ serial: nodeCertificates.serial });
  const credentials = await tx
    .update(nodeCredentials)
    .set({ revokedAt: sql`now()`, revokedReason: reason })
    .where(and(eq(nodeCredentials.nodeId, nodeId), isNull(nodeCredentials.revokedAt)))
    .returning({ id: nodeCredentials.id });
  return { certificates: certificates.length, credentials: credentials.length };
}

/** Cancels the node's open commands (delete, purge completion). */
export async function cancelPendingCommands(tx: Tx, nodeId: string): Promise<number> {
  const cancelled = await tx
    .update(nodeCommands)
    .set({ status: 'cancelled', finishedAt: sql`now()` })
    .where(and(eq(nodeCommands.nodeId, nodeId), inArray(nodeCommands.status, OPEN_COMMAND_STATUSES)))
    .returning({ id: nodeCommands.id });
  return cancelled.length;
}

/**
 * The node a credential secret belongs to, while the credential is not revoked and of the node's
 * generation; expired or not (the caller says which, `CREDENTIAL_EXPIRED`).
 */
export async function nodeOfCredential(db: DbOrTx, secret: string) {
  const [row] = await db
    .select({
      credentialId: nodeCredentials.id,
      createdAt: nodeCredentials.createdAt,
      expiresAt: nodeCredentials.expiresAt,
      renewedFrom: nodeCredentials.renewedFrom,
      firstUsedAt: nodeCredentials.firstUsedAt,
      node: nodes,
    })
    .from(nodeCredentials)
    .innerJoin(nodes, eq(nodes.id, nodeCredentials.nodeId))
    .where(
      and(
        eq(nodeCredentials.secretHash, hashSecret(secret)),
        isNull(nodeCredentials.revokedAt),
        eq(nodeCredentials.identityGeneration, nodes.identityGeneration),
        isNull(nodes.deletedAt),
      ),
    );
  return row;
}
