import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestamps } from './columns';

export interface PoolPolicy {
  lostAfter?: string;
  maxUnavailable?: number | string;
  maxUnhealthy?: number | string;
}

export const pools = pgTable('pools', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['bare-metal', 'provider', 'vps-host', 'tenant-root'] }).notNull(),
  siteId: text('site_id').notNull(),
  tenantId: text('tenant_id'),
  grants: text('grants').array().notNull().default([]),
  policy: jsonb('policy').$type<PoolPolicy>().notNull().default({}),
  ...timestamps,
});
