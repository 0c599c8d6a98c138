import { and, eq, inArray, sql } from 'drizzle-orm';
import { assertControllable, type Control, type NodeChange } from '../domain/controls';
import { DrydockError } from '../domain/errors';
import { actorOf, requireOwner, type Principal } from '../domain/principal';
import type { Db, Tx } from './client';
import { freeDisruption } from './disruptions';
import { appendEvent } from './events';
import {
  labelsAndSchedulersOf,
  labelsOf,
  nodeNotFound,
  nodeState,
  nodeView,
  visibleTo,
  type NodeRow,
} from './queries/nodes';
import { nodeLabels, nodes } from './schema';

// The reads live in queries/nodes.ts (routes may import those); re-exported for the writers here.
export {
  getVisibleNode,
  labelsOf,
  nodeState,
  nodeView,
  readNodeView,
  visibleTo,
  type LabelRow,
  type NodeRow,
  type NodeView,
} from './queries/nodes';

/**
 * Locks the node row for the rest of the transaction; NOT_FOUND when the principal cannot see it,
 * FORBIDDEN when it sees it only through a grant (`requireOwner`).
 */
export async function lockNode(tx: Tx, nodeId: string, principal?: Principal): Promise<NodeRow> {
  const visible = principal ? visibleTo(principal) : sql`true`;
  const [node] = await tx
    .select()
    .from(nodes)
    .where(and(eq(nodes.id, nodeId), visible))
    .for('update')
    .prepare('lock_node')
    .execute();
  if (!node) throw nodeNotFound(nodeId);
  if (principal) requireOwner(principal, node, `node ${nodeId}`);
  return node;
}

/** CONFLICT when the caller read an older version than the node (or pool) has now. */
export function checkVersion(
  row: { version: number },
  expected: number | undefined,
  what: 'node' | 'pool' = 'node',
): void {
  if (expected !== undefined && expected !== row.version) {
    throw new DrydockError('CONFLICT', `${what} changed since version ${expected} (now ${row.version})`, {
      currentVersion: row.version,
    });
  }
}

export interface ChangeContext {
  actor: string;
  reason?: string | null;
  operationId?: string | null;
}

/**
 * Writes a change to a locked node: its axes and labels, version + 1, and its one event; a node it
 * puts back into service (or out of its pool) gives back its disruption-budget slot.
 *
 * The statements every node change sends (here, `lockNode`, `labelsOf`, `schedulerViewsOf`, `freeDisruption`,
 * `appendEvent`) are prepared through drizzle's `.prepare()`: each connection parses them once,
 * then only binds and executes them — what the cordon and label benchmarks need to reach half of
 * pgbench (docs/benchmarks.md; docs/production.md says what it means behind a pooler).
 */
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
    .returning()
    .prepare('apply_node_change')
    .execute();
  if (change.labels) await writeOperatorLabels(tx, node.id, change.labels);
  await freeDisruption(tx, node, updated!);
  await appendEvent(tx, { nodeId: node.id, tenantId: node.tenantId, ...change.event, ...context });
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
      })
      .prepare('write_operator_labels')
      .execute();
  }
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
  const [labels, schedulers] = await labelsAndSchedulersOf(tx, before.id);
  const change = input.control(nodeState(before, labels));
  if (!change) return { before, after: before, changed: false, view: nodeView(before, labels, schedulers) };
  const after = await applyNodeChange(tx, before, change, {
    actor: actorOf(input.principal),
    reason: input.reason,
  });
  const view = nodeView(after, change.labels ? await labelsOf(tx, after.id) : labels, schedulers);
  return { before, after, changed: true, view };
}

/**
 * Runs one control on one node in one transaction: lock, visibility, terminal state, version,
 * then the change and its event, or nothing at all when the node already is as asked.
 */
export async function changeNode(db: Db, input: ControlInput) {
  return db.transaction((tx) => changeNodeIn(tx, input));
}
