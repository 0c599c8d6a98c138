import { sql } from 'drizzle-orm';
import type { Tx } from './client';

/** The Postgres channel on which a transaction names a node whose agent must look again. */
export const NODE_CHANNEL = 'drydock_node';

/** Asks every API process to wake the node's agent session; delivered when the transaction commits. */
export async function wakeNode(tx: Tx, nodeId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${NODE_CHANNEL}, ${nodeId})`);
}

/** The Postgres channel on which a transaction says it appended events (db/events.ts). */
export const EVENTS_CHANNEL = 'drydock_events';

/** The Postgres channel on which a committed change to an API key names it (migration 0011). */
export const KEYS_CHANNEL = 'drydock_keys';
