import { and, arrayContains, asc, eq, gt, ilike, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { NodeState } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import type { Label } from '../../domain/labels';
import type { Access, Liveness, ProvisionState } from '../../domain/node';
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
  /** The last id of the page before. */
  after?: string;
  limit: number;
}

/** The nodes the principal sees that match, by id. */
export async function listNodes(db: DbOrTx, principal: Principal, q: NodeFilter): Promise<NodeRow[]> {
  const filters: (SQL | undefined)[] = [
    visibleTo(principal),
    q.includeDeleted ? undefined : isNull(nodes.deletedAt),
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
    q.after ? gt(nodes.id, q.after) : undefined,
  ];
  return db
    .select()
    .from(nodes)
    .where(and(...filters))
    .orderBy(asc(nodes.id))
    .limit(q.limit);
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
  return rows.map((n) =>
    nodeView(
      n,
      labels.filter((l) => l.nodeId === n.id),
      schedulers.filter((v) => v.nodeId === n.id),
    ),
  );
}
