import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import { budgetMax, type Budget } from '../domain/budget';
import { isTerminal } from '../domain/provision';
import { drainWorkflowId } from '../domain/operation';
import type { Tx } from './client';
import { enqueueWake } from './outbox';
import { disruptions, nodes, pools } from './schema';
import type { NodeRow } from './queries/nodes';

// A pool's disruption budget (db/schema/disruptions.ts). Every write that takes or gives back a
// slot holds the pool row locked, and every caller has locked the node first: node, then pool, as
// every transaction that takes both does (remediation's storm count too), so two of them never
// wait on each other. Leaving the queue (`stopWaiting`) needs no lock: it frees no slot.
// A transaction that reads the budget to decide (`lockBudget`) or frees a slot locks the row
// exclusively; a drained node taking its slot without asking (`holdDrained`) decides nothing, so
// it shares the lock with the other drained nodes of the pool and excludes only those.

async function lockPool(tx: Tx, poolId: string, strength: 'update' | 'share' = 'update') {
  const [pool] = await tx.select().from(pools).where(eq(pools.id, poolId)).for(strength);
  return pool;
}

/** Locks the pool row (after the node) and reads its budget: `maxUnavailable` and who holds it. */
export async function lockBudget(tx: Tx, poolId: string): Promise<Budget> {
  const pool = await lockPool(tx, poolId);
  const [size] = await tx
    .select({ n: count() })
    .from(nodes)
    .where(and(eq(nodes.poolId, poolId), isNull(nodes.deletedAt)));
  const holders = await tx
    .select({ nodeId: disruptions.nodeId })
    .from(disruptions)
    .where(and(eq(disruptions.poolId, poolId), eq(disruptions.state, 'holding')))
    .orderBy(asc(disruptions.nodeId));
  return {
    max: budgetMax(pool?.policy.maxUnavailable, size?.n ?? 0),
    used: holders.length,
    holders: holders.map((h) => h.nodeId),
  };
}

/**
 * Records the node's row in its pool's budget as `state`, for the drain `operationId`; the pool
 * must be locked (`lockBudget`). A row moves from `waiting` to `holding`, never back.
 */
export async function markDisruption(
  tx: Tx,
  node: { id: string; poolId: string },
  operationId: string,
  state: 'holding' | 'waiting',
): Promise<void> {
  await tx
    .insert(disruptions)
    .values({ nodeId: node.id, poolId: node.poolId, operationId, state })
    .onConflictDoUpdate({
      target: disruptions.nodeId,
      set: { operationId, state, since: sql`now()` },
      // A holder stays as it is (the drain that took the slot, since when) when asked again.
      setWhere: sql`${disruptions.state} = 'waiting'`,
    });
}

/**
 * A drained node takes its slot without asking: it is empty already, and stays out until uncordoned.
 * The pool row is locked shared: a budget read waits for this holder to commit (and then counts
 * it), while the drained nodes of one pool, each writing only its own row, do not queue behind one
 * another (a pool drain finishing 1,000 empty nodes at once; bench: pool-drain).
 * The lock and the row are sent together, one round trip, and run in the order sent: both hold the
 * pool row shared (the row's foreign key too) until the commit, which is all a budget read waits
 * on, and a transaction that locked the node first waits on no other for them.
 */
export async function holdDrained(tx: Tx, node: NodeRow, operationId: string): Promise<void> {
  if (!node.poolId) return;
  await Promise.all([
    lockPool(tx, node.poolId, 'share'),
    markDisruption(tx, { id: node.id, poolId: node.poolId }, operationId, 'holding'),
  ]);
}

/** A drain that ended without finishing stops waiting for a slot (a slot it holds stays held). */
export async function stopWaiting(tx: Tx, nodeId: string): Promise<void> {
  await tx.delete(disruptions).where(and(eq(disruptions.nodeId, nodeId), eq(disruptions.state, 'waiting')));
}

/**
 * Gives back the node's slot (or its place in the queue) once it stops being unavailable: it was
 * uncordoned, deleted, or left the pool — or left service for good (decommissioned), so it is no
 * longer a node out for a while, and would otherwise hold the slot for ever. `applyNodeChange`
 * calls it for every change, so each path that does one of those frees the slot in its own
 * transaction, and wakes the pool's waiting drains in it (`wakeBudgetWaiters`).
 */
export async function freeDisruption(tx: Tx, before: NodeRow, after: NodeRow): Promise<void> {
  const stillOut = after.cordoned && !after.deletedAt && after.poolId === before.poolId;
  if (stillOut && !isTerminal(after.provisionState)) return;
  const [row] = await tx
    .select()
    .from(disruptions)
    .where(eq(disruptions.nodeId, after.id))
    .prepare('disruption_of')
    .execute();
  if (!row) return;
  // Under the pool's lock, so a drain counting the budget either sees the slot held and is woken
  // once this commits, or counts after it and takes the slot.
  await lockPool(tx, row.poolId);
  await tx.delete(disruptions).where(eq(disruptions.nodeId, after.id));
  if (row.state === 'holding') await wakeBudgetWaiters(tx, row.poolId);
}

/**
 * Wakes the drains waiting for a slot of the pool's budget, through the outbox (they look at the
 * budget again once this transaction commits): a slot was given back, or the budget grew. Called
 * under the pool's lock, so a drain queued before the change is woken and one that counts after it
 * sees it.
 */
export async function wakeBudgetWaiters(tx: Tx, poolId: string): Promise<void> {
  const waiting = await tx
    .select({ nodeId: disruptions.nodeId })
    .from(disruptions)
    .where(and(eq(disruptions.poolId, poolId), eq(disruptions.state, 'waiting')))
    .orderBy(asc(disruptions.since));
  for (const { nodeId } of waiting) await enqueueWake(tx, drainWorkflowId(nodeId), 'budget slot freed');
}
