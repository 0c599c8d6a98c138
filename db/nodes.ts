import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { assertControllable, type Control, type NodeChange, type NodeState } from '../domain/controls';
import { DrydockError } from '../domain/errors';
import { actorOf, type Principal } from '../domain/principal';
import type { Db, DbOrTx, Tx } from './client';
import { appendEvent } from './events';
import { nodeLabels, nodes } from './schema';

export type NodeRow = typeof nodes.$inferSelect;
export type LabelRow = typeof nodeLabels.$inferSelect;

/** The node object of the API (docs/concepts.md). */
export function nodeView(node: NodeRow, labels: LabelRow[]) {
  return {
    id: node.id,
    tenantId: node.tenantId,
    poolId: node.poolId,
    siteId: node.siteId,
    hostname: node.hostname,
    displayName: node.displayName,
    provisionState: node.provisionState,
    access: node.access,
    cordoned: node.cordoned,
    maintenance: node.maintenance,
    noScheduleReasons: node.noScheduleReasons,
    connectivity: node.connectivity,
    liveness: node.liveness,
    lastSeenAt: node.lastSeenAt?.toISOString() ?? null,
    labels: labels.map((l) => ({ key: l.key, value: l.value, source: l.source })),
    conditions: node.conditions,
    session: { connectivity: node.connectivity, lastSeenAt: node.lastSeenAt?.toISOString() ?? null },
    identityGeneration: node.identityGeneration,
    version: node.version,
    createdAt: node.createdAt.toISOString(),
    updatedAt: node.updatedAt.toISOString(),
    deletedAt: node.deletedAt?.toISOString() ?? null,
  };
}
export type NodeView = ReturnType<typeof nodeView>;

/**
 * SQL that is true for nodes the principal may see: operators see every node (tombstones too);
 * a tenant sees live nodes of pools its tenant owns or is granted.
 */
export function visibleTo(principal: Principal) {
  if (principal.kind === 'operator') return sql`true`;
  if (principal.kind === 'node') return sql`false`;
  return sql`(${nodes.deletedAt} is null and ${nodes.poolId} in (select id from pools where tenant_id = ${principal.tenantId} or ${principal.tenantId} = any(grants)))`;
}

function notFound(nodeId: string): DrydockError {
  return new DrydockError('NOT_FOUND', `node ${nodeId} not found`, { nodeId });
}

export async function labelsOf(db: DbOrTx, nodeId: string): Promise<LabelRow[]> {
  return db.select().from(nodeLabels).where(eq(nodeLabels.nodeId, nodeId)).orderBy(asc(nodeLabels.key));
}

/** The node as the principal sees it, or NOT_FOUND. */
export async function getVisibleNode(db: DbOrTx, nodeId: string, principal: Principal): Promise<NodeRow> {
  const [node] = await db
    .select()
    .from(nodes)
    .where(and(eq(nodes.id, nodeId), visibleTo(principal)));
  if (!node) throw notFound(nodeId);
  return node;
}

/** Locks the node row for the rest of the transaction; NOT_FOUND when the principal cannot see it. */
export async function lockNode(tx: Tx, nodeId: string, principal?: Principal): Promise<NodeRow> {
  const visible = principal ? visibleTo(principal) : sql`true`;
  const [node] = await tx
    .select()
    .from(nodes)
    .where(and(eq(nodes.id, nodeId), visible))
    .for('update');
  if (!node) throw notFound(nodeId);
  return node;
}

/** CONFLICT when the caller read an older version than the node has now. */
export function checkVersion(node: NodeRow, expected: number | undefined): void {
  if (expected !== undefined && expected !== node.version) {
    throw new DrydockError('CONFLICT', `node changed since version ${expected} (now ${node.version})`, {
      currentVersion: node.version,
    });
  }
}

export interface ChangeContext {
  actor: string;
  reason?: string | null;
  operationId?: string | null;
}

/** Writes a change to a locked node: its axes and labels, version + 1, and its one event. */
export async function applyNodeChange(
  tx: Tx,
  node: NodeRow,
  change: NodeChange,
  context: ChangeContext,
): Promise<NodeRow> {
  const [updated] = await tx
    .update(nodes)
    .set({ ...change.patch, version: node.version + 1, updatedAt: sql`now()` })
    .where(eq(nodes.id, node.id))
    .returning();
  if (change.labels) await writeOperatorLabels(tx, node.id, change.labels);
  await appendEvent(tx, {
    nodeId: node.id,
    tenantId: node.tenantId,
    type: change.event.type,
    data: change.event.data ?? {},
    ...context,
  });
  return updated!;
}

async function writeOperatorLabels(tx: Tx, nodeId: string, labels: NonNullable<NodeChange['labels']>) {
  if (labels.removed.length > 0) {
    await tx
      .delete(nodeLabels)
      .where(
        and(
          eq(nodeLabels.nodeId, nodeId),
          eq(nodeLabels.source, 'operator'),
          inArray(nodeLabels.key, labels.removed),
        ),
      );
  }
  const rows = Object.entries(labels.set).map(([key, value]) => ({
    nodeId,
    key,
    value,
    source: 'operator' as const,
  }));
  if (rows.length > 0) {
    await tx
      .insert(nodeLabels)
      .values(rows)
      .onConflictDoUpdate({
        target: [nodeLabels.nodeId, nodeLabels.key],
        set: { value: sql`excluded.value`, updatedAt: sql`now()` },
      });
  }
}

/** The node and its labels as a control sees them. */
export function nodeState(node: NodeRow, labels: LabelRow[]): NodeState {
  return { ...node, labels };
}

export interface ControlInput {
  nodeId: string;
  principal: Principal;
  version?: number;
  control: Control;
  reason?: string | null;
}

/** One control inside a transaction that has locked nothing yet; see `changeNode`. */
export async function changeNodeIn(tx: Tx, input: ControlInput) {
  const before = await lockNode(tx, input.nodeId, input.principal);
  assertControllable(before);
  checkVersion(before, input.version);
  const labels = await labelsOf(tx, before.id);
  const change = input.control(nodeState(before, labels));
  if (!change) return { before, after: before, changed: false, view: nodeView(before, labels) };
  const after = await applyNodeChange(tx, before, change, {
    actor: actorOf(input.principal),
    reason: input.reason,
  });
  const view = nodeView(after, change.labels ? await labelsOf(tx, after.id) : labels);
  return { before, after, changed: true, view };
}

/**
 * Runs one control on one node in one transaction: lock, visibility, terminal state, version,
 * then the change and its event, or nothing at all when the node already is as asked.
 */
export async function changeNode(db: Db, input: ControlInput) {
  return db.transaction((tx) => changeNodeIn(tx, input));
}
