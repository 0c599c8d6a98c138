import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';

/**
 * The admin console's signed-in browsers, shared by every API process. The browser's cookie holds
 * the session id; here is only its SHA-256, and the API key the browser signed in with sealed
 * under a key derived from that id (console/sessions.ts): this table alone gives neither away.
 */
export const consoleSessions = pgTable('console_sessions', {
  idHash: text('id_hash').primaryKey(),
  sealedKey: text('sealed_key').notNull(),
  csrf: text('csrf').notNull(),
  /** `GET /v1/whoami` as it answered at sign-in. */
  caller: jsonb('caller').$type<unknown>().notNull(),
  /** The message a change left for the next page, shown once. */
  flash: jsonb('flash').$type<{ kind: 'ok' | 'error'; text: string }>(),
  /** A join token the session just created, with its secret, sealed as the key is; shown once. */
  sealedCreated: text('sealed_created'),
  expiresAt: tz('expires_at').notNull(),
});
