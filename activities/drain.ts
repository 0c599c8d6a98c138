import { and, asc, eq, sql } from 'drizzle-orm';
import { grantsSlot, type Budget } from '../domain/budget';
import { finishDrain } from '../domain/controls';
import { isDraining } from '../domain/node';
import { nextDrainCheck, type DrainProgress, type DrainWaitingFor } from '../domain/progress';
import type { Db, Tx } from '../db/client';
import { endCancelledOperation } from '../db/cancellation';
import { forceReleaseOpenAllocations } from '../db/allocations';
import { holdDrained, lockBudget, markDisruption } from '../db/disruptions';
import { applyNodeChange, lockNode, type NodeRow } from '../db/nodes';
import { finishOperation, recordProgress, wakeFollowersOf, type OperationRow } from '../db/operations';
import { endingOf, isOpen } from '../db/queries/allocations';
import { isoOrNull } from '../db/queries/dates';
import { progressOf } from '../db/queries/operations';
import { allocations } from '../db/schema';
import type { WorkerMetrics } from '../observability/metrics';
import { beginOperationRun } from './begin';

/** How many live allocations a look reports by id (the count is always exact). */
const REPORTED_ALLOCATIONS = 20;

/** Who a forced release is recorded as, on the allocations and their events. */
const FORCED_BY = 'system:drain';

export function createDrainActivities(db: Db, metrics?: WorkerMetrics) {
  return {
    /**
     * One look at a draining node, in one transaction (the node locked, then its pool's row when it
     * counts the budget): drained when it holds nothing live (`node.drained`); cancelled when
     * `draining` is gone (`node.drain.cancelled`); past the deadline, what is still live released
     * by force when the pool's disruption budget has a slot (`allocation.force-released` each, and
     * then drained), else queued for one; otherwise what it waits for and when it looks next. Each
     * answer is written on the operation in the same transaction, and is what the look returns.
     * A look retried after it committed finds the operation as it left it and changes nothing.
     * The first look begins the operation (`beginOperationRun`).
     */
    async lookAtDrain(input: { nodeId: string; operationId: string }): Promise<DrainProgress> {
      // Set only by the look that drained the node, observed once that commits (never by a retry).
      let waitedSeconds: number | null = null;
      let queued = false;
      const progress = await db.transaction(async (tx): Promise<DrainProgress> => {
        const node = await lockNode(tx, input.nodeId);
        const op = await beginOperationRun(tx, input.operationId, 'waiting');
        if (op.status !== 'running') return progressOf(op) as DrainProgress;
        if (!isDraining(node) || node.deletedAt) {
          return progressOf((await endCancelledOperation(tx, op.id, { actor: FORCED_BY }))!) as DrainProgress;
        }
        let live = await liveAllocations(tx, node.id);
        const deadline = op.deadline;
        const now = Date.now();
        if (live.allocations > 0 && deadline && deadline.getTime() <= now) {
          const budget = await slotFor(tx, node, op);
          if (budget) {
            queued = op.phase !== 'waiting-for-budget';
            return waiting(tx, op, { ...live, budget }, now);
          }
          await forceReleaseOpenAllocations(
            tx,
            node.id,
            { actor: FORCED_BY, operationId: op.id, deadline: deadline.toISOString() },
            { askSources: true },
          );
          live = await liveAllocations(tx, node.id);
        }
        if (live.allocations > 0) return waiting(tx, op, { ...live, budget: null }, now);
        // Drained and still cordoned: the node counts against its pool's budget until uncordoned.
        await holdDrained(tx, node, op.id);
        await applyNodeChange(tx, node, finishDrain(node), { actor: FORCED_BY, operationId: op.id });
        const drained = await finishOperation(tx, op.id, 'succeeded', {
          result: { drained: true },
          waitingFor: { ...live, budget: null },
        });
        waitedSeconds = (Date.now() - op.createdAt.getTime()) / 1_000;
        return progressOf(drained!) as DrainProgress;
      });
      if (waitedSeconds !== null) metrics?.drained(waitedSeconds);
      if (queued) metrics?.budgetWait();
      return progress;
    },
  };
}

/**
 * The node's live allocations, earliest end first: the exact count, and the first few listed —
 * observed work with its scheduler's id, when its end was asked and what the scheduler answered.
 */
async function liveAllocations(tx: Tx, nodeId: string): Promise<Omit<DrainWaitingFor, 'budget'>> {
  const live = await tx
    .select({ allocation: allocations, total: sql<number>`count(*) over ()` })
    .from(allocations)
    .where(and(eq(allocations.nodeId, nodeId), isOpen))
    .orderBy(sql`${allocations.endsAt} asc nulls last`, asc(allocations.id))
    .limit(REPORTED_ALLOCATIONS);
  return {
    allocations: Number(live[0]?.total ?? 0),
    items: live.map(({ allocation: a }) => ({
      id: a.id,
      endsAt: isoOrNull(a.endsAt),
      source: a.source,
      externalId: a.externalId,
      endRequestedAt: isoOrNull(a.endRequestedAt),
      ending: endingOf(a),
    })),
    earliestEndsAt: isoOrNull(live[0]?.allocation.endsAt ?? null),
  };
}

/**
 * Past the deadline: takes (or keeps) a slot of the pool's disruption budget for the node, under
 * the pool's lock; when none is free, queues it and answers the budget it waits on. A node of no
 * pool needs no slot. A retry after a crash finds the slot held and releases nothing twice.
 */
async function slotFor(tx: Tx, node: NodeRow, op: OperationRow): Promise<Budget | null> {
  if (!node.poolId) return null;
  const pooled = { id: node.id, poolId: node.poolId };
  const budget = await lockBudget(tx, node.poolId);
  if (!grantsSlot(budget, node.id)) {
    await markDisruption(tx, pooled, op.id, 'waiting');
    return budget;
  }
  await markDisruption(tx, pooled, op.id, 'holding');
  return null;
}

/**
 * The drain still waits: what for, and when it looks next, written on its operation. `now`: the
 * time the look compared the deadline with, so a deadline it found ahead is one it looks again at.
 */
async function waiting(
  tx: Tx,
  op: OperationRow,
  waitingFor: DrainWaitingFor,
  now: number,
): Promise<DrainProgress> {
  const nextCheckAt = nextDrainCheck(now, waitingFor.earliestEndsAt, op.deadline?.toISOString() ?? null);
  const phase = waitingFor.budget ? 'waiting-for-budget' : 'waiting';
  const recorded = await recordProgress(tx, op.id, { phase, waitingFor, nextCheckAt: new Date(nextCheckAt) });
  // A pool drain following this drain counts it as waiting for the budget or as draining, and
  // looks only when woken: the drain's move between the two wakes it. (Not every change of who
  // holds the budget: each waiting drain would wake it on each; its next look reads them anew.)
  if (phase !== op.phase) await wakeFollowersOf(tx, op, `node drain ${op.id} ${phase}`);
  return progressOf(recorded!) as DrainProgress;
}
