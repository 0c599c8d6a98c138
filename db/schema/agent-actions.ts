import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { tz } from './columns';
import { nodes } from './nodes';

/** An action the node's agent is configured to run, as it reports it (no command line). */
export interface ReportedAction {
  name: string;
  /** Declared parameters: each value must match `pattern`; `default` when the caller gives none. */
  params: Record<string, { pattern: string; default?: string }>;
  timeoutSeconds: number;
  /** It restarts the machine (a reboot). */
  restarts: boolean;
}

/**
 * The actions the node's agent said it runs at the start of its latest session
 * (`PUT /v1/agent/facts`): what `POST /v1/nodes/{id}/commands` checks a request against.
 */
export const agentActions = pgTable('agent_actions', {
  nodeId: text('node_id')
    .primaryKey()
    .references(() => nodes.id),
  actions: jsonb('actions').$type<ReportedAction[]>().notNull().default([]),
  reportedAt: tz('reported_at').notNull().defaultNow(),
});
