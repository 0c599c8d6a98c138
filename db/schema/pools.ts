import { sql } from 'drizzle-orm';
import { check, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { PoolPolicy } from '../../domain/pool';
import { timestamps } from './columns';

export type { PoolPolicy };

export const pools = pgTable(
  'pools',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['bare-metal', 'provider', 'vps-host', 'tenant-root'] }).notNull(),
    siteId: text('site_id').notNull(),
    tenantId: text('tenant_id'),
    grants: text('grants').array().notNull().default([]),
    policy: jsonb('policy').$type<PoolPolicy>().notNull().default({}),
    /** Bumped by every change of the pool (`PATCH /v1/pools/{id}`): its If-Match. */
    version: integer('version').notNull().default(1),
    ...timestamps,
  },
  (t) => [check('pools_version_positive', sql`${t.version} > 0`)],
);
