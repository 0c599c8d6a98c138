import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import {
  RENEWAL_NONCE_TTL_MS,
  RENEWAL_OVERLAP_MS,
  credentialTtlMs,
  renewalMessage,
} from '../domain/credentials';
import { DrydockError } from '../domain/errors';
import type { Db } from './client';
import { issueCredential } from './identity';
import type { NodeRow } from './nodes';
import { nodeCertificates, nodeCredentials, pools } from './schema';

/**
 * A nonce for the credential to renew itself with, good for a minute; a newer one replaces it.
 * It is kept on the credential's row: whichever API process the signed answer reaches finds it.
 */
export async function renewalNonce(
  db: Db,
  credentialId: string,
): Promise<{ nonce: string; expiresAt: Date }> {
  const nonce = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + RENEWAL_NONCE_TTL_MS);
  await db
    .update(nodeCredentials)
    .set({ renewNonce: nonce, renewNonceExpiresAt: expiresAt })
    .where(eq(nodeCredentials.id, credentialId));
  return { nonce, expiresAt };
}

/**
 * Renews a credential, in one transaction: the nonce must be the one handed to it (spent here) and
 * the signature the node's key's, checked against its live certificate of the current identity
 * generation. A new certificate and credential live the pool's `credentialTtl`; the old credential
 * works until the new one is first used (`firstUse`) or `RENEWAL_OVERLAP_MS` ends. A successor
 * issued before and never used is revoked: an answer the agent never got is not left live.
 */
export async function renewCredential(
  db: Db,
  input: { node: NodeRow; credentialId: string; clusterId: string; nonce: string; signature: string },
): Promise<{ credential: string; expiresAt: Date }> {
  const { node } = input;
  return db.transaction(async (tx) => {
    const [credential] = await tx
      .select()
      .from(nodeCredentials)
      .where(and(eq(nodeCredentials.id, input.credentialId), isNull(nodeCredentials.revokedAt)))
      .for('update');
    if (!credential) throw new DrydockError('UNAUTHENTICATED', 'the node credential was revoked');
    const fresh =
      credential.renewNonce === input.nonce &&
      credential.renewNonceExpiresAt !== null &&
      credential.renewNonceExpiresAt.getTime() > Date.now();
    if (!fresh) {
      throw new DrydockError(
        'INVALID_INPUT',
        'the nonce is not the one handed out for this credential, or it expired: ask for a new one (POST /v1/agent/credentials/nonce)',
        { field: 'nonce' },
      );
    }
    await tx
      .update(nodeCredentials)
      .set({ renewNonce: null, renewNonceExpiresAt: null })
      .where(eq(nodeCredentials.id, credential.id));
    const [certificate] = await tx
      .select()
      .from(nodeCertificates)
      .where(
        and(
          eq(nodeCertificates.nodeId, node.id),
          eq(nodeCertificates.identityGeneration, node.identityGeneration),
          isNull(nodeCertificates.revokedAt),
          gt(nodeCertificates.expiresAt, sql`now()`),
        ),
      )
      .orderBy(desc(nodeCertificates.issuedAt))
      .limit(1);
    if (!certificate) {
      throw new DrydockError(
        'UNAUTHENTICATED',
        `node ${node.id} has no live certificate to renew with: join the machine again`,
      );
    }
    const message = renewalMessage({ clusterId: input.clusterId, nodeId: node.id, nonce: input.nonce });
    if (
      !verify(null, message, createPublicKey(certificate.publicKey), Buffer.from(input.signature, 'base64'))
    ) {
      throw new DrydockError('UNAUTHENTICATED', "the signature does not verify with the node's key", {
        reason: 'bad-signature',
      });
    }
    await tx
      .update(nodeCredentials)
      .set({ revokedAt: sql`now()`, revokedReason: 'superseded' })
      .where(
        and(
          eq(nodeCredentials.renewedFrom, credential.id),
          isNull(nodeCredentials.firstUsedAt),
          isNull(nodeCredentials.revokedAt),
        ),
      );
    await tx
      .update(nodeCredentials)
      .set({
        expiresAt: sql`least(${nodeCredentials.expiresAt}, now() + ${`${RENEWAL_OVERLAP_MS} milliseconds`}::interval)`,
      })
      .where(eq(nodeCredentials.id, credential.id));
    await tx
      .update(nodeCertificates)
      .set({ revokedAt: sql`now()`, revokedReason: 'renewed' })
      .where(eq(nodeCertificates.serial, certificate.serial));
    const [pool] = node.poolId ? await tx.select().from(pools).where(eq(pools.id, node.poolId)) : [];
    const issued = await issueCredential(
      tx,
      node,
      certificate.publicKey,
      credentialTtlMs(pool?.policy),
      credential.id,
    );
    return { credential: issued.credential, expiresAt: issued.expiresAt };
  });
}

/**
 * A renewed credential's first use ends the one it renewed. Once per credential: the first
 * lookup of each API process finds `firstUsedAt` set by another and writes nothing.
 */
export async function firstUse(db: Db, credentialId: string, renewedFrom: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [used] = await tx
      .update(nodeCredentials)
      .set({ firstUsedAt: sql`now()` })
      .where(and(eq(nodeCredentials.id, credentialId), isNull(nodeCredentials.firstUsedAt)))
      .returning({ id: nodeCredentials.id });
    if (!used) return;
    await tx
      .update(nodeCredentials)
      .set({ revokedAt: sql`now()`, revokedReason: 'renewed' })
      .where(and(eq(nodeCredentials.id, renewedFrom), isNull(nodeCredentials.revokedAt)));
  });
}
