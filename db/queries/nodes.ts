import { and, arrayContains, asc, desc, eq, ilike, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { NodeState } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import type { Label } from '../../domain/labels';
import type { Access, Liveness, ProvisionState } from '../../domain/node';
import type { NodeOrder, NodeSortKey } from '../../domain/node-order';
import { requireOwner, type Principal } from '../../domain/principal';
import type { Selector } from '../../domain/selector';
import type { DbOrTx } from '../client';
import { nodeLabels, nodes, schedulerViews } from '../schema';
import { isoOrNull, stamps } from './dates';
import { schedulerViewOf, schedulerViewsOf, type SchedulerViewRow } from './scheduler-views';

export type NodeRow = typeof nodes.$inferSelect;
export type LabelRow = typeof nodeLabels.$inferSelect;

/** The node object of the API (docs/api.md), with what its schedulers say of it. */
export function nodeView(node: NodeRow, labels: Label[], schedulers: SchedulerViewRow[]) {
  return {
    id: node.id,
    tenantId: node.tenantId,
    poolId: node.poolId,
    siteId: node.siteId,
    requestedPoolId: node.requestedPoolId,
    hostname: node.hostname,
    displayName: node.displayName,
    provisionState: node.provisionState,
    access: node.access,
    cordoned: node.cordoned,
    maintenance: node.maintenance,
    noScheduleReasons: node.noScheduleReasons,
    connectivity: node.connectivity,
    liveness: node.liveness,
    lastSeenAt: isoOrNull(node.lastSeenAt),
    bootId: node.bootId,
    bootedAt: isoOrNull(node.bootedAt),
    labels: labels.map((l) => ({ key: l.key, value: l.value, source: l.source })),
    conditions: node.conditions,
    session: { connectivity: node.connectivity, lastSeenAt: isoOrNull(node.lastSeenAt) },
    identityGeneration: node.identityGeneration,
    version: node.version,
    ...stamps(node),
    deletedAt: isoOrNull(node.deletedAt),
    schedulers: schedulers.map(schedulerViewOf),
  };
}
export type NodeView = ReturnType<typeof nodeView>;

/** The node's labels and scheduler views, read together (one round trip on one connection). */
export async function labelsAndSchedulersOf(
  db: DbOrTx,
  nodeId: string,
): Promise<[LabelRow[], SchedulerViewRow[]]> {
  return Promise.all([labelsOf(db, nodeId), schedulerViewsOf(db, nodeId)]);
}

/** The view of `node`, its labels and scheduler views read. */
export async function readNodeView(db: DbOrTx, node: NodeRow): Promise<NodeView> {
  return nodeView(node, ...(await labelsAndSchedulersOf(db, node.id)));
}

/** The node and its labels as a control sees them. */
export function nodeState(node: NodeRow, labels: Label[]): NodeState {
  return { ...node, labels };
}

/**
 * SQL that is true for nodes the principal may see: operators see every node (tombstones too);
 * a tenant sees live nodes of pools its tenant owns or is granted.
 */
export function visibleTo(principal: Principal) {
  if (principal.kind === 'operator') return sql`true`;
  if (principal.kind === 'node') return sql`false`;
  return sql`(${nodes.deletedAt} is null and ${nodes.poolId} in (select id from pools where tenant_id = ${principal.tenantId} or ${principal.tenantId} = any(grants)))`;
}

export function nodeNotFound(nodeId: string): DrydockError {
  return new DrydockError('NOT_FOUND', `node ${nodeId} not found`, { nodeId });
}

export async function labelsOf(db: DbOrTx, nodeId: string): Promise<LabelRow[]> {
  return db
    .select()
    .from(nodeLabels)
    .where(eq(nodeLabels.nodeId, nodeId))
    .orderBy(asc(nodeLabels.key))
    .prepare('labels_of')
    .execute();
}

/** The node as the principal sees it, or NOT_FOUND. */
export async function getVisibleNode(db: DbOrTx, nodeId: string, principal: Principal): Promise<NodeRow> {
  const [node] = await db
    .select()
    .from(nodes)
    .where(and(eq(nodes.id, nodeId), visibleTo(principal)));
  if (!node) throw nodeNotFound(nodeId);
  return node;
}

/**
 * The node the principal may operate (controls, drains, remediations), or NOT_FOUND when it cannot
 * see it, or FORBIDDEN when it sees it only through a grant of its pool (`requireOwner`).
 */
export async function getOperableNode(db: DbOrTx, nodeId: string, principal: Principal): Promise<NodeRow> {
  const node = await getVisibleNode(db, nodeId, principal);
  requireOwner(principal, node, `node ${nodeId}`);
  return node;
}

export interface NodeFilter {
  /** Only these nodes. */
  ids?: string[];
  tenantId?: string;
  poolId?: string;
  siteId?: string;
  cordoned?: boolean;
  maintenance?: boolean;
  /** Nodes with this NoSchedule reason (`draining`, `quarantined`, …). */
  noScheduleReason?: string;
  provisionState?: ProvisionState;
  access?: Access;
  liveness?: Liveness;
  /** Nodes carrying every one of these labels. */
  selector?: Selector;
  /** Nodes whose hostname contains this, in any case. */
  hostname?: string;
  includeDeleted?: boolean;
  /** The order (default: by id). */
  order?: NodeOrder;
  /** Where the page starts: after the node with this key, or (`before`) the page ending before it. */
  from?: { key: NodeKey; before: boolean };
  limit: number;
}

/** A node's place in an order: its value of the order's field (as text), then its id. */
export interface NodeKey {
  value: string;
  id: string;
}

/**
 * Each order's field as SQL, and the type its key's value is read back as. Names compare in the
 * "natural" collation (migration 0025: `gpu-2` before `gpu-10`); a node with no pool, or never
 * seen, sorts first.
 */
const ORDER_FIELDS: Record<
  Exclude<NodeSortKey, `label:${string}`> | 'id',
  { field: SQL; type: 'text' | 'boolean' | 'timestamptz' }
> = {
  id: { field: sql`${nodes.id}`, type: 'text' },
  hostname: { field: sql`${nodes.hostname} collate "natural"`, type: 'text' },
  poolId: { field: sql`coalesce(${nodes.poolId}, '') collate "natural"`, type: 'text' },
  provisionState: { field: sql`${nodes.provisionState}`, type: 'text' },
  access: { field: sql`${nodes.access}`, type: 'text' },
  cordoned: { field: sql`${nodes.cordoned}`, type: 'boolean' },
  maintenance: { field: sql`${nodes.maintenance}`, type: 'boolean' },
  liveness: { field: sql`${nodes.liveness}`, type: 'text' },
  lastSeenAt: { field: sql`coalesce(${nodes.lastSeenAt}, '-infinity')`, type: 'timestamptz' },
};

/** An order's field: one of `ORDER_FIELDS`, or a node's value of a label (none: the empty text). */
function orderField(key: NodeSortKey | 'id'): { field: SQL; type: 'text' | 'boolean' | 'timestamptz' } {
  if (!key.startsWith('label:')) return ORDER_FIELDS[key as keyof typeof ORDER_FIELDS];
  const label = key.slice('label:'.length);
  return {
    field: sql`coalesce((select ${nodeLabels.value} from ${nodeLabels} where ${nodeLabels.nodeId} = ${nodes.id} and ${nodeLabels.key} = ${label}), '') collate "natural"`,
    type: 'text',
  };
}

/**
 * A page of the nodes the principal sees that match, in the order asked (ties by id), each with
 * its key for the cursors: from the start, after a key, or the page before a key (read in the
 * other direction, then turned round).
 */
export async function listNodes(
  db: DbOrTx,
  principal: Principal,
  q: NodeFilter,
): Promise<{ node: NodeRow; key: NodeKey }[]> {
  const { field, type } = orderField(q.order?.key ?? 'id');
  const backward = q.from?.before ?? false;
  const descending = (q.order?.descending ?? false) !== backward;
  // The key's value goes as text and Postgres reads it as the field's type: the driver would
  // otherwise convert it on its own (a time to milliseconds, any string to a boolean).
  const from = q.from
    ? sql`(${field}, ${nodes.id}) ${sql.raw(descending ? '<' : '>')} (cast(${q.from.key.value}::text as ${sql.raw(type)}), ${q.from.key.id})`
    : undefined;
  const rows = await db
    .select({ node: nodes, value: sql<string>`(${field})::text` })
    .from(nodes)
    .where(and(...nodeFilters(principal, q), from))
    .orderBy(...(descending ? [desc(field), desc(nodes.id)] : [asc(field), asc(nodes.id)]))
    .limit(q.limit);
  const keyed = rows.map(({ node, value }) => ({ node, key: { value, id: node.id } }));
  return backward ? keyed.reverse() : keyed;
}

/** The conditions of a filter, the principal's sight first. */
export function nodeFilters(
  principal: Principal,
  q: Omit<NodeFilter, 'order' | 'from' | 'limit'>,
): (SQL | undefined)[] {
  return [
    visibleTo(principal),
    q.includeDeleted ? undefined : isNull(nodes.deletedAt),
    q.ids ? inArray(nodes.id, q.ids) : undefined,
    q.tenantId ? eq(nodes.tenantId, q.tenantId) : undefined,
    q.poolId ? eq(nodes.poolId, q.poolId) : undefined,
    q.siteId ? eq(nodes.siteId, q.siteId) : undefined,
    q.cordoned === undefined ? undefined : eq(nodes.cordoned, q.cordoned),
    q.maintenance === undefined ? undefined : eq(nodes.maintenance, q.maintenance),
    q.noScheduleReason ? arrayContains(nodes.noScheduleReasons, [q.noScheduleReason]) : undefined,
    q.provisionState ? eq(nodes.provisionState, q.provisionState) : undefined,
    q.access ? eq(nodes.access, q.access) : undefined,
    q.liveness ? eq(nodes.liveness, q.liveness) : undefined,
    ...carriesLabels(q.selector ?? {}),
    q.hostname ? ilike(nodes.hostname, `%${q.hostname.replace(/[\\%_]/g, '\\$&')}%`) : undefined,
  ];
}

/** One condition per label of `selector`: the node carries that label with that value. */
export function carriesLabels(selector: Selector): SQL[] {
  return Object.entries(selector).map(
    ([key, value]) =>
      sql`exists (select 1 from ${nodeLabels} where ${nodeLabels.nodeId} = ${nodes.id} and ${nodeLabels.key} = ${key} and ${nodeLabels.value} = ${value})`,
  );
}

/** The views of `rows`, each with its labels and scheduler views (one query for each, for all of them). */
export async function nodeViews(db: DbOrTx, rows: NodeRow[]): Promise<NodeView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((n) => n.id);
  const [labels, schedulers] = await Promise.all([
    db.select().from(nodeLabels).where(inArray(nodeLabels.nodeId, ids)).orderBy(asc(nodeLabels.key)),
    db
      .select()
      .from(schedulerViews)
      .where(inArray(schedulerViews.nodeId, ids))
      .orderBy(asc(schedulerViews.source)),
  ]);
  const labelsOf = byNode(labels);
  const schedulersOf = byNode(schedulers);
  return rows.map((n) => nodeView(n, labelsOf.get(n.id) ?? [], schedulersOf.get(n.id) ?? []));
}

/** Rows of many nodes, by node id, in their order. */
function byNode<T extends { nodeId: string }>(rows: T[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>();
  for (const row of rows) {
    const group = grouped.get(row.nodeId);
    if (group) group.push(row);
    else grouped.set(row.nodeId, [row]);
  }
  return grouped;
}
