import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/** A node's certificates: its public key bound to an identity generation. */
export const nodeCertificates = pgTable(
  'node_certificates',
  {
    serial: text('serial').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    publicKey: text('public_key').notNull(),
    identityGeneration: integer('identity_generation').notNull(),
    issuedAt: tz('issued_at').notNull().defaultNow(),
    expiresAt: tz('expires_at').notNull(),
    revokedAt: tz('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [index('node_certificates_node_idx').on(t.nodeId)],
);

/**
 * Every public key a node identity was issued for, by the SHA-256 of its SubjectPublicKeyInfo
 * bytes (so no PEM spelling makes it another key). A key belongs to one node, ever: once that
 * node is revoked, deleted or decommissioned, its key can never join again.
 */
export const nodePublicKeys = pgTable('node_public_keys', {
  spkiSha256: text('spki_sha256').primaryKey(),
  nodeId: text('node_id')
    .notNull()
    .references(() => nodes.id),
  createdAt: tz('created_at').notNull().defaultNow(),
});

/**
 * Node credentials (bearer secrets of the agent), stored only as SHA-256. Each has a lifetime; the
 * agent renews it with a signature by its key (docs/lifecycle/enrollment.md#credential-renewal).
 */
export const nodeCredentials = pgTable(
  'node_credentials',
  {
    id: text('id').primaryKey(),
    nodeId: text('node_id')
      .notNull()
      .references(() => nodes.id),
    secretHash: text('secret_hash').notNull(),
    identityGeneration: integer('identity_generation').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    /** Past it the credential answers 401 CREDENTIAL_EXPIRED (pool policy `credentialTtl`). */
    expiresAt: tz('expires_at').notNull(),
    /** The credential this one renewed: it ends when this one is first used. */
    renewedFrom: text('renewed_from'),
    firstUsedAt: tz('first_used_at'),
    /** The nonce the agent signs to renew this credential, until `renewNonceExpiresAt`. */
    renewNonce: text('renew_nonce'),
    renewNonceExpiresAt: tz('renew_nonce_expires_at'),
    revokedAt: tz('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [
    uniqueIndex('node_credentials_secret_hash_idx').on(t.secretHash),
    index('node_credentials_node_idx').on(t.nodeId),
  ],
);
