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

/** Node credentials (bearer secrets of the agent), stored only as SHA-256. */
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
    revokedAt: tz('revoked_at'),
    revokedReason: text('revoked_reason'),
  },
  (t) => [
    uniqueIndex('node_credentials_secret_hash_idx').on(t.secretHash),
    index('node_credentials_node_idx').on(t.nodeId),
  ],
);
