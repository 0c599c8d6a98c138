import { pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/** API keys: operator keys have no tenant; only the SHA-256 of the secret is stored. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    tenantId: text('tenant_id'),
    actions: text('actions').array().notNull().default([]),
    secretHash: text('secret_hash').notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
    revokedAt: tz('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_secret_hash_idx').on(t.secretHash)],
);
