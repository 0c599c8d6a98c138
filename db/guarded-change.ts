import { getTableColumns } from 'drizzle-orm';
import type { Sql } from 'postgres';
import { assertControllable, type Control, type NodeChange } from '../domain/controls';
import type { Label } from '../domain/labels';
import { isDraining } from '../domain/node';
import { actorOf, type Principal } from '../domain/principal';
import { EVENT_FEED_LOCK } from './events';
import { checkVersion } from './nodes';
import { nodeNotFound, nodeState, nodeView, type NodeRow, type NodeView } from './queries/nodes';
import { nodes } from './schema';
import { EVENTS_CHANNEL } from './wakeups';

// The short controls (cordon, uncordon, taint, label, maintenance) without a transaction: one
// statement reads the node, the domain decides, and one statement writes the change only if the
// node is still at the version that was read (`update … where version = $read`), its labels, and
// its event. Every write to a node's axes or operator labels bumps its version, so a write that
// matches read what it changes; one that matches nothing lost a race and reads again. Each
// statement commits on its own: two round trips for a change, one for a no-op, where the locking
// path (`changeNodeIn`) takes eight.

/** Misses in a row before a control gives up on the guard and locks the row instead. */
const ATTEMPTS = 3;

/** The columns a guarded write sets; a change to any other column takes the locking path. */
const GUARDED_COLUMNS = new Set(['cordoned', 'maintenance', 'noScheduleReasons']);

const COLUMNS = Object.entries(getTableColumns(nodes));

/**
 * The columns the write returns: those it sets, and `last_seen_at`, which the heartbeat flush
 * writes without a version bump. Every other write to a node bumps its version (migration 0009),
 * so a write that matched the version read leaves the rest as the read found it, and the row after
 * is the row read with these: half the columns to parse per change.
 */
const RETURNED_KEYS = new Set([...GUARDED_COLUMNS, 'version', 'updatedAt', 'lastSeenAt']);
const RETURNED = COLUMNS.filter(([key]) => RETURNED_KEYS.has(key));

/** A `nodes` row as drizzle would have read it, from the raw row of a statement here. */
function nodeRowOf(raw: Record<string, unknown>, columns = COLUMNS): NodeRow {
  const row: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as NodeRow;
}

interface ReadRow extends Record<string, unknown> {
  labels: Label[];
  /** The node has a row in its pool's disruption budget (holding a slot, or waiting for one). */
  disrupted: boolean;
}

// Labels come back as `Label` objects in key order, the order of the node view.
const LABELS_OF_N = `coalesce((select json_agg(json_build_object('key', l.key, 'value', l.value, 'source', l.source)
  order by l.key) from node_labels l where l.node_id = n.id), '[]'::json)`;

const READ_COLUMNS = `n.*, ${LABELS_OF_N} as labels,
  exists (select 1 from disruptions d where d.node_id = n.id) as disrupted`;

/** The read as an operator sends it ($1: the node id); bench/mutations.ts runs it in pgbench too. */
export const OPERATOR_READ = `select ${READ_COLUMNS} from nodes n where n.id = $1`;

/** The tenant's view, as `visibleTo`: live nodes of pools it owns or is granted ($2). */
const TENANT_READ = `select ${READ_COLUMNS} from nodes n
  where n.id = $1 and n.deleted_at is null
    and n.pool_id in (select id from pools where tenant_id = $2 or $2 = any(grants))`;

async function readNode(sql: Sql, nodeId: string, principal: Principal): Promise<ReadRow | undefined> {
  if (principal.kind === 'node') return undefined;
  const [row] =
    principal.kind === 'operator'
      ? await sql.unsafe<ReadRow[]>(OPERATOR_READ, [nodeId], { prepare: true })
      : await sql.unsafe<ReadRow[]>(TENANT_READ, [nodeId, principal.tenantId], { prepare: true });
  return row;
}

/**
 * The write, all of it in one statement: the node's columns and version if it is still at the
 * version read (and, for a change that would give back a disruption slot, only if it holds none:
 * freeing one locks the pool, which the locking path does), its operator labels, its event under
 * the event feed's shared lock (db/events.ts: taken before the event's id is drawn, held to
 * commit) with the feed's NOTIFY, and the node with its labels as they now are. Parameters: $1
 * node id, $2 version read, $3 cordoned, $4 maintenance, $5 no-schedule reasons (null: as they
 * are), $6 whether the change would give back a slot, $7 operator label keys removed, $8 and $9
 * keys and values set, $10 event type, $11 actor, $12 reason, $13 event data. bench/mutations.ts
 * runs this text in pgbench.
 */
export const GUARDED_WRITE = `
with updated as (
  update nodes set
    cordoned = coalesce($3::boolean, cordoned),
    maintenance = coalesce($4::boolean, maintenance),
    no_schedule_reasons = coalesce($5::text[], no_schedule_reasons),
    version = version + 1,
    updated_at = now()
  where id = $1 and version = $2
    and (not $6::boolean or not exists (select 1 from disruptions where node_id = $1))
  returning *
),
removed as (
  delete from node_labels
  where node_id in (select id from updated) and source = 'operator' and key = any($7::text[])
),
upserted as (
  insert into node_labels (node_id, key, value, source)
  select u.id, s.key, s.value, 'operator' from updated u, unnest($8::text[], $9::text[]) as s(key, value)
  on conflict (node_id, key) do update set value = excluded.value, updated_at = now()
),
feed as (select pg_advisory_xact_lock_shared(${EVENT_FEED_LOCK}), pg_notify('${EVENTS_CHANNEL}', '')),
appended as (
  insert into events (node_id, tenant_id, type, actor, reason, data)
  select u.id, u.tenant_id, $10, $11, $12, $13::jsonb from updated u, feed
)
select ${RETURNED.map(([, column]) => `u.${column.name}`).join(', ')}, coalesce((
  select json_agg(json_build_object('key', l.key, 'value', l.value, 'source', l.source) order by l.key)
  from (
    select key, value, source from node_labels
    where node_id = $1 and key <> all($8::text[]) and not (source = 'operator' and key = any($7::text[]))
    union all
    select key, value, 'operator' from unnest($8::text[], $9::text[]) as s(key, value)
  ) l), '[]'::json) as labels
from updated u`;

async function writeChange(
  sql: Sql,
  before: NodeRow,
  change: NodeChange,
  frees: boolean,
  event: { actor: string; reason: string | null },
): Promise<{ row: NodeRow; labels: Label[] } | undefined> {
  const { patch, labels } = change;
  const set = Object.entries(labels?.set ?? {});
  const [raw] = await sql.unsafe<ReadRow[]>(
    GUARDED_WRITE,
    [
      before.id,
      before.version,
      patch.cordoned ?? null,
      patch.maintenance ?? null,
      patch.noScheduleReasons ?? null,
      frees,
      labels?.removed ?? [],
      set.map(([key]) => key),
      set.map(([, value]) => value),
      change.event.type,
      event.actor,
      event.reason,
      JSON.stringify(change.event.data ?? {}),
    ],
    { prepare: true },
  );
  return raw ? { row: { ...before, ...nodeRowOf(raw, RETURNED) }, labels: raw.labels } : undefined;
}

export interface GuardedInput {
  nodeId: string;
  principal: Principal;
  version?: number;
  control: Control;
  reason?: string | null;
}

export interface GuardedResult {
  before: NodeRow;
  after: NodeRow;
  view: NodeView;
}

/**
 * A control on one node as `changeNodeIn` runs it (visibility, terminal state, version, then the
 * change and its event or nothing at all), in guarded statements; null when it must take the
 * locking path instead: a change that ends a drain (its clean-up is more than one statement),
 * gives back a disruption slot, sets other columns, or lost the race `ATTEMPTS` times in a row.
 */
export async function guardedChange(sql: Sql, input: GuardedInput): Promise<GuardedResult | null> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const read = await readNode(sql, input.nodeId, input.principal);
    if (!read) throw nodeNotFound(input.nodeId);
    const before = nodeRowOf(read);
    assertControllable(before);
    checkVersion(before, input.version);
    const change = input.control(nodeState(before, read.labels));
    if (!change) return { before, after: before, view: nodeView(before, read.labels) };
    if (Object.keys(change.patch).some((column) => !GUARDED_COLUMNS.has(column))) return null;
    const after = { ...before, ...change.patch };
    if (isDraining(before) && !isDraining(after)) return null;
    const frees = !after.cordoned;
    if (frees && read.disrupted) return null;
    const written = await writeChange(sql, before, change, frees, {
      actor: actorOf(input.principal),
      reason: input.reason ?? null,
    });
    if (written) {
      return { before, after: written.row, view: nodeView(written.row, written.labels) };
    }
  }
  return null;
}
