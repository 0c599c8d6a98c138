import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { RemediationPolicy } from '../../domain/remediation';
import { timestamps } from './columns';

export interface PoolPolicy {
  lostAfter?: string;
  maxUnavailable?: number | string;
  maxUnhealthy?: number | string;
  /** Ladders, attempt timeouts and healthyAfter per condition type (docs/lifecycle/remediation.md). */
  remediation?: RemediationPolicy;
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
