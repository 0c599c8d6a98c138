import { sql } from 'drizzle-orm';
import { NODE_UNREACHABLE } from '../domain/liveness';
import type { Condition } from '../domain/node';
import type { Db, Tx } from './client';
import { applyNodeChange, lockNode } from './nodes';
import { nodes, telemetryCurrent } from './schema';

/**
 * Writes last-seen times in one statement (the heartbeat flush). Never moves a time backwards and
 * never touches a deleted node; returns nothing, as no control changed.
 */
export async function flushLastSeen(db: Db, seen: Map<string, Date>): Promise<void> {
  if (seen.size === 0) return;
  const rows = JSON.stringify([...seen].map(([id, at]) => ({ id, seen: at.toISOString() })));
  await db.execute(sql`
    with seen as (select * from jsonb_to_recordset(${rows}::jsonb) as v(id text, seen timestamptz)),
    touched as (
      update ${nodes} set last_seen_at = seen.seen
      from seen
      where ${nodes.id} = seen.id and ${nodes.deletedAt} is null
        and ${nodes.provisionState} <> 'decommissioned'
        and (${nodes.lastSeenAt} is null or ${nodes.lastSeenAt} <= seen.seen)
      returning ${nodes.id} as id, seen.seen as seen
    )
    insert into ${telemetryCurrent} (node_id, last_heartbeat_at, updated_at)
    select id, seen, now() from touched
    on conflict (node_id) do update set last_heartbeat_at = excluded.last_heartbeat_at, updated_at = now()`);
}

export function withoutUnreachable(conditions: Condition[]): Condition[] {
  return conditions.filter((c) => c.type !== NODE_UNREACHABLE);
}

/**
 * The first heartbeat of a session: connected, alive, `unreachable` and `NodeUnreachable` cleared,
 * `node.connected`, in one transaction. A node already connected and alive is left alone.
 */
export async function connectNode(db: Db, nodeId: string, seenAt: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const node = await lockNode(tx, nodeId);
    if (node.deletedAt || node.liveness === 'decommissioned') return false;
    if (node.connectivity === 'connected' && node.liveness === 'alive') return false;
    await applyNodeChange(
      tx,
      node,
      {
        patch: {
          connectivity: 'connected',
          liveness: 'alive',
          noScheduleReasons: node.noScheduleReasons.filter((r) => r !== 'unreachable'),
          conditions: withoutUnreachable(node.conditions),
          lastSeenAt: seenAt,
          unreachableSince: null,
        },
        event: {
          type: 'node.connected',
          data: { was: { connectivity: node.connectivity, liveness: node.liveness } },
        },
      },
      { actor: `node:${nodeId}` },
    );
    return true;
  });
}

/** The agent said goodbye (`drydock-agent stop`): disconnected and `offline`, `node.disconnected`. */
export async function sayGoodbye(db: Db, nodeId: string, seenAt: Date): Promise<void> {
  await db.transaction(async (tx: Tx) => {
    const node = await lockNode(tx, nodeId);
    if (node.deletedAt || node.liveness === 'decommissioned') return;
    if (node.connectivity === 'disconnected' && node.liveness === 'offline') return;
    await applyNodeChange(
      tx,
      node,
      {
        patch: { connectivity: 'disconnected', liveness: 'offline', lastSeenAt: seenAt },
        event: { type: 'node.disconnected', data: { reason: 'goodbye' } },
      },
      { actor: `node:${nodeId}` },
    );
  });
}
