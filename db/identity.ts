import { randomBytes } from 'node:crypto';
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import { newId } from '../domain/ids';
import { hashSecret, newSecret } from '../domain/secrets';
import type { DbOrTx, Tx } from './client';
import { nodeCertificates, nodeCredentials, nodeCommands, nodes } from './schema';

/** How long a node certificate is valid. */
const CERTIFICATE_LIFETIME_MS = 365 * 86_400_000;

/** Issues a certificate for the public key and a node credential; returns the credential secret once. */
export async function issueIdentity(
  tx: Tx,
  node: { id: string; identityGeneration: number },
  publicKeyPem: string,
): Promise<{ credential: string; serial: string }> {
  const serial = randomBytes(16).toString('hex');
  const credential = newSecret('ddn');
  const now = new Date();
  await tx.insert(nodeCertificates).values({
    serial,
    nodeId: node.id,
    publicKey: publicKeyPem,
    identityGeneration: node.identityGeneration,
    issuedAt: now,
    expiresAt: new Date(now.getTime() + CERTIFICATE_LIFETIME_MS),
  });
  await tx.insert(nodeCredentials).values({
    id: newId('cred'),
    nodeId: node.id,
    secretHash: hashSecret(credential),
    identityGeneration: node.identityGeneration,
  });
  return { credential, serial };
}

/**
 * Revokes every live certificate and credential of a node with `reason`; returns how many
 * certificates it revoked. Call inside the transaction of the change that revokes them.
 */
export async function revokeIdentity(tx: Tx, nodeId: string, reason: string): Promise<number> {
  const revoked = await tx
    .update(nodeCertificates)
    .set({ revokedAt: sql`now()`, revokedReason: reason })
    .where(and(eq(nodeCertificates.nodeId, nodeId), isNull(nodeCertificates.revokedAt)))
    .returning({ serial: nodeCertificates.serial });
  await tx
    .update(nodeCredentials)
    .set({ revokedAt: sql`now()`, revokedReason: reason })
    .where(and(eq(nodeCredentials.nodeId, nodeId), isNull(nodeCredentials.revokedAt)));
  return revoked.length;
}

/** Cancels the node's pending commands (delete, purge completion). */
export async function cancelPendingCommands(tx: Tx, nodeId: string): Promise<number> {
  const cancelled = await tx
    .update(nodeCommands)
    .set({ status: 'cancelled', finishedAt: sql`now()` })
    .where(and(eq(nodeCommands.nodeId, nodeId), eq(nodeCommands.status, 'pending')))
    .returning({ id: nodeCommands.id });
  return cancelled.length;
}

/** The node a credential secret belongs to, while the credential is live and of the node's generation. */
export async function nodeOfCredential(db: DbOrTx, secret: string) {
  const [row] = await db
    .select({ credentialId: nodeCredentials.id, node: nodes })
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

/** Whether a public key already belongs to a node identity, and whether that identity is finished. */
export async function publicKeyUse(db: DbOrTx, publicKeyPem: string) {
  const [row] = await db
    .select({
      nodeId: nodeCertificates.nodeId,
      revoked: count(nodeCertificates.revokedAt),
      total: count(),
    })
    .from(nodeCertificates)
    .where(eq(nodeCertificates.publicKey, publicKeyPem))
    .groupBy(nodeCertificates.nodeId);
  return row;
}
