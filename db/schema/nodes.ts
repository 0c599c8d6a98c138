import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { Condition } from '../../domain/node';
import { ACCESS, CONNECTIVITY, LIVENESS, PROVISION_STATES } from '../../domain/node';
import { timestamps, tz } from './columns';
import { pools } from './pools';

export const nodes = pgTable(
  'nodes',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id'),
    poolId: text('pool_id').references(() => pools.id),
    siteId: text('site_id'),
    hostname: text('hostname').notNull(),
    displayName: text('display_name'),
    provisionState: text('provision_state', { enum: PROVISION_STATES }).notNull(),
    access: text('access', { enum: ACCESS }).notNull().default('allowed'),
    cordoned: boolean('cordoned').notNull().default(false),
    maintenance: boolean('maintenance').notNull().default(false),
    noScheduleReasons: text('no_schedule_reasons').array().notNull().default([]),
    connectivity: text('connectivity', { enum: CONNECTIVITY }).notNull().default('disconnected'),
    liveness: text('liveness', { enum: LIVENESS }).notNull().default('alive'),
    lastSeenAt: tz('last_seen_at'),
    /**
     * The machine's boot as its agent said it at its latest session start (the kernel's boot id,
     * and when it booted): a reboot is a new id. Not a change of the node: no version, like
     * `lastSeenAt`.
     */
    bootId: text('boot_id'),
    bootedAt: tz('booted_at'),
    /**
     * The agent run (session id) the node's heartbeats came from last, the one before it, and when
     * the heartbeats went back to a run seen before (two machines with one identity), within the
     * duplicate-session window. Not a change of the node: no version.
     */
    agentSessionId: text('agent_session_id'),
    previousAgentSessionId: text('previous_agent_session_id'),
    sessionAlternations: jsonb('session_alternations').$type<string[]>().notNull().default([]),
    /** When the node became unreachable; `lost` counts from here. */
    unreachableSince: tz('unreachable_since'),
    /** The pool a node that joined without a token asked for; approval may take it. */
    requestedPoolId: text('requested_pool_id'),
    conditions: jsonb('conditions').$type<Condition[]>().notNull().default([]),
    identityGeneration: integer('identity_generation').notNull().default(1),
    version: integer('version').notNull().default(1),
    ...timestamps,
    deletedAt: tz('deleted_at'),
  },
  (t) => [
    index('nodes_pool_idx').on(t.poolId, t.id),
    index('nodes_tenant_idx').on(t.tenantId, t.id),
    // The node list sorted by hostname, as people read them (`gpu-2` before `gpu-10`): the
    // "natural" collation is ICU's numeric ordering, made by migration 0025.
    index('nodes_hostname_idx').on(sql`${t.hostname} collate "natural"`, t.id),
    // The liveness sweep looks only at live nodes that are still counted as alive or unreachable.
    index('nodes_liveness_idx')
      .on(t.liveness, t.lastSeenAt)
      .where(sql`${t.deletedAt} is null`),
    check('nodes_version_positive', sql`${t.version} > 0`),
  ],
);
