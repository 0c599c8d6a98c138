import { sql } from 'drizzle-orm';
import { bigserial, index, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/**
 * Every break-glass SSH certificate issued (docs/security.md#break-glass-ssh): what it says, who
 * asked and why, and its revocation. The serial is the certificate's, so a node's KRL names it.
 */
export const sshCertificates = pgTable(
  'ssh_certificates',
  {
    serial: bigserial('serial', { mode: 'number' }).primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    principal: text('principal').notNull(),
    keyId: text('key_id').notNull(),
    /** `SHA256:…` of the user's public key, as `ssh-keygen -l` and sshd's log show it. */
    publicKeyFingerprint: text('public_key_fingerprint').notNull(),
    issuedBy: text('issued_by').notNull(),
    reason: text('reason').notNull(),
    issuedAt: tz('issued_at').notNull(),
    validAfter: tz('valid_after').notNull(),
    validBefore: tz('valid_before').notNull(),
    revokedAt: tz('revoked_at'),
    revokedBy: text('revoked_by'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [
    index('ssh_certificates_node_idx').on(t.nodeId, t.serial),
    // What a node's KRL lists: its revoked certificates that sshd would otherwise still take.
    index('ssh_certificates_revoked_idx')
      .on(t.nodeId, t.validBefore)
      .where(sql`${t.revokedAt} is not null`),
  ],
);
