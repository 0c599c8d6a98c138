import { and, desc, eq, gt, isNotNull, lt } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { sshCertificates } from '../schema';
import { isoOrNull } from './dates';

export type SshCertificateRow = typeof sshCertificates.$inferSelect;

/** A certificate's record as the API shows it (the certificate itself only when just issued). */
export function sshCertificateView(row: SshCertificateRow) {
  return {
    serial: row.serial,
    nodeId: row.nodeId,
    principal: row.principal,
    keyId: row.keyId,
    publicKeyFingerprint: row.publicKeyFingerprint,
    issuedBy: row.issuedBy,
    reason: row.reason,
    issuedAt: row.issuedAt.toISOString(),
    validAfter: row.validAfter.toISOString(),
    validBefore: row.validBefore.toISOString(),
    revokedAt: isoOrNull(row.revokedAt),
    revokedBy: row.revokedBy,
    revokedReason: row.revokedReason,
  };
}

/** The node's certificates, newest first, `before` a serial when paging. */
export function listSshCertificates(
  db: DbOrTx,
  nodeId: string,
  q: { before?: number; limit: number },
): Promise<SshCertificateRow[]> {
  return db
    .select()
    .from(sshCertificates)
    .where(
      and(
        eq(sshCertificates.nodeId, nodeId),
        q.before === undefined ? undefined : lt(sshCertificates.serial, q.before),
      ),
    )
    .orderBy(desc(sshCertificates.serial))
    .limit(q.limit);
}

export async function findSshCertificate(
  db: DbOrTx,
  nodeId: string,
  serial: number,
): Promise<SshCertificateRow | undefined> {
  const [row] = await db
    .select()
    .from(sshCertificates)
    .where(and(eq(sshCertificates.nodeId, nodeId), eq(sshCertificates.serial, serial)));
  return row;
}

/**
 * The serials the node's KRL must name: its revoked certificates sshd would still take. One past
 * its `validBefore` is refused by sshd anyway, so the list stays as short as the live ones.
 */
export async function revokedSshSerials(db: DbOrTx, nodeId: string, now: Date): Promise<number[]> {
  const rows = await db
    .select({ serial: sshCertificates.serial })
    .from(sshCertificates)
    .where(
      and(
        eq(sshCertificates.nodeId, nodeId),
        isNotNull(sshCertificates.revokedAt),
        gt(sshCertificates.validBefore, now),
      ),
    )
    .orderBy(sshCertificates.serial);
  return rows.map((row) => row.serial);
}
