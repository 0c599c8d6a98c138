import { integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/** Join tokens: the secret is stored only as its SHA-256; `maxUses` 0 means unlimited. */
export const joinTokens = pgTable(
  'join_tokens',
  {
    id: text('id').primaryKey(),
    secretHash: text('secret_hash').notNull(),
    poolId: text('pool_id').notNull(),
    tenantId: text('tenant_id'),
    labels: jsonb('labels').$type<Record<string, string>>().notNull().default({}),
    description: text('description'),
    maxUses: integer('max_uses').notNull(),
    uses: integer('uses').notNull().default(0),
    expiresAt: tz('expires_at'),
    createdBy: text('created_by').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    revokedAt: tz('revoked_at'),
  },
  (t) => [uniqueIndex('join_tokens_secret_hash_idx').on(t.secretHash)],
);
