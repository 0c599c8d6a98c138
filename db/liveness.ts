import { sql } from 'drizzle-orm';
import { NODE_UNREACHABLE } from '../domain/liveness';
import type { NodePatch } from '../domain/controls';
import type { DrydockEvent } from '../domain/events';
import type { Condition } from '../domain/node';
import type { Db, Tx } from './client';
import { applyNodeChange, lockNode, type NodeRow } from './nodes';
import { events, nodes, telemetryCurrent } from './schema';

/**
 * Writes last-seen times (node id → epoch ms) in one statement (the heartbeat flush). Never moves a
 * time backwards and never touches a deleted node. Returns the nodes it wrote that are not
 * connected and alive: a sweep closed their sessions while their beats could not be written (the
 * database away longer than a session lasts), and only a new session brings them back.
 */
export async function flushLastSeen(db: Db, seen: Map<string, number>): Promise<string[]> {
  if (seen.size === 0) return [];
  const rows = JSON.stringify([...seen].map(([id, at]) => ({ id, seen: new Date(at).toISOString() })));
  const closed = await db.execute<{ id: string }>(sql`
    with seen as (select * from jsonb_to_recordset(${rows}::jsonb) as v(id text, seen timestamptz)),
    touched as (
      update ${nodes} set last_seen_at = seen.seen
      from seen
      where ${nodes.id} = seen.id and ${nodes.deletedAt} is null
        and ${nodes.provisionState} <> 'decommissioned'
        and (${nodes.lastSeenAt} is null or ${nodes.lastSeenAt} <= seen.seen)
      returning ${nodes.id} as id, seen.seen as seen, ${nodes.connectivity} as connectivity,
        ${nodes.liveness} as liveness
    ),
    telemetry as (
      insert into ${telemetryCurrent} (node_id, last_heartbeat_at, updated_at)
      select id, seen, now() from touched
      on conflict (node_id) do update set last_heartbeat_at = excluded.last_heartbeat_at, updated_at = now()
    )
    select id from touched where connectivity <> 'connected' or liveness <> 'alive'`);
  return closed.map((row) => row.id);
}

/** What a liveness sweep changes on one node: its liveness columns, and its one event. */
export interface LivenessChange {
  node: NodeRow;
  patch: Pick<
    NodePatch,
    'liveness' | 'connectivity' | 'unreachableSince' | 'noScheduleReasons' | 'conditions'
  >;
  /** Oldest first: a node that went silent past its lease at once loses its session too. */
  events: DrydockEvent[];
}

/**
 * `applyNodeChange` for many nodes in two statements, whatever their number: each node's liveness
 * columns (its row merged with its patch), `version + 1` and `updated_at`, then its events. The rows
 * must have been locked and read in `tx` (a sweep's candidates are), so writing the merged columns
 * is writing the patch.
 */
export async function applyLivenessChanges(tx: Tx, changes: LivenessChange[], actor: string): Promise<void> {
  if (changes.length === 0) return;
  const rows = changes.map(({ node, patch }) => {
    const after = { ...node, ...patch };
    return {
      id: node.id,
      liveness: after.liveness,
      connectivity: after.connectivity,
      unreachable_since: after.unreachableSince?.toISOString() ?? null,
      no_schedule_reasons: after.noScheduleReasons,
      conditions: after.conditions,
      version: node.version + 1,
    };
  });
  await tx.execute(sql`
    update ${nodes} set liveness = v.liveness, connectivity = v.connectivity,
      unreachable_since = v.unreachable_since, no_schedule_reasons = v.no_schedule_reasons,
      conditions = v.conditions, version = v.version, updated_at = now()
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v(id text, liveness text,
      connectivity text, unreachable_since timestamptz, no_schedule_reasons text[], conditions jsonb,
      version integer)
    where ${nodes.id} = v.id`);
  const appended = changes.flatMap(({ node, events }) =>
    events.map((event) => ({
      node_id: node.id,
      tenant_id: node.tenantId,
      type: event.type,
      data: event.data ?? {},
    })),
  );
  await tx.execute(sql`
    insert into ${events} (node_id, tenant_id, type, actor, data)
    select e.node_id, e.tenant_id, e.type, ${actor}, e.data
    from jsonb_to_recordset(${JSON.stringify(appended)}::jsonb) as e(node_id text, tenant_id text,
      type text, data jsonb)`);
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
