import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { isOpen } from '../db/queries/allocations';
import { grantsSlot, type Budget } from '../domain/budget';
import { finishDrain, startDrain, assertControllable } from '../domain/controls';
import { isDraining } from '../domain/node';
import { isFinished } from '../domain/operation';
import type { Db, Tx } from '../db/client';
import { endCancelledOperation } from '../db/cancellation';
import { forceReleaseOpenAllocations } from '../db/allocations';
import { holdDrained, lockBudget, markDisruption } from '../db/disruptions';
import { withPreparedStatements } from '../db/prepared';
import { applyNodeChange, checkVersion, lockNode, type NodeRow } from '../db/nodes';
import { finishOperation, findOperation, type OperationRow } from '../db/operations';
import { allocations, events, operations } from '../db/schema';
import type { WorkerMetrics } from '../observability/metrics';
import type { BeginInput, BeginResult, DrainRequest } from '../workflows/definitions';
import { beginOperation } from './begin';

/** How many live allocations a check reports by id (the count is always exact). */
const REPORTED_ALLOCATIONS = 20;

export type DrainCheck =
  | { outcome: 'drained' | 'cancelled' | 'finished' }
  | {
      outcome: 'waiting';
      liveAllocationCount: number;
      liveAllocations: { id: string; endsAt: string | null }[];
      earliestEndsAt: string | null;
    };

/** A forced release: done (`released` allocations), over budget (waits for a slot), or the drain ended. */
export type ForcedRelease =
  { outcome: 'released'; released: number } | { outcome: 'waiting'; budget: Budget } | { outcome: 'ended' };

/** Who a forced release is recorded as, on the allocations and their events. */
const FORCED_BY = 'system:drain';

export function createDrainActivities(db: Db, metrics?: WorkerMetrics) {
  // The look's statements are all lookups by key: prepared, they are one round trip each and the
  // ones sent together are pipelined (db/prepared.ts).
  const looks = withPreparedStatements(db);
  return {
    /** The drain fence, in one transaction: cordon, `draining`, the operation, `node.draining`. */
    async beginDrain(input: BeginInput<DrainRequest>): Promise<BeginResult> {
      return beginOperation(db, input, {
        kind: 'drain',
        open: {
          // The node left `draining` (uncordon) before the workflow noticed; that drain is over.
          staleWhen: (node) => !isDraining(node),
          end: async (tx, open) => void (await endCancelledOperation(tx, open.id, { actor: input.actor })),
        },
        async admit(tx, node) {
          assertControllable(node);
          const drainedBy = await drainThatDrained(tx, node);
          if (drainedBy) return drainedBy;
          checkVersion(node, input.version);
        },
        async apply(tx, node, operation) {
          const change = startDrain(node);
          return {
            node: await applyNodeChange(tx, node, change, {
              actor: input.actor,
              reason: input.reason,
              operationId: operation.id,
            }),
          };
        },
      });
    },

    /**
     * One look at a draining node, in one transaction: finished when it holds no live allocation
     * (`node.drained`), cancelled when `draining` is gone (`node.drain.cancelled`), else what it waits for.
     */
    async checkDrain(input: { nodeId: string; operationId: string }): Promise<DrainCheck> {
      // Set only by the look that drained the node, observed once that commits (never by a retry).
      let waitedSeconds: number | null = null;
      const check = await looks.transaction(async (tx): Promise<DrainCheck> => {
        // Sent together (prepared, so postgres.js pipelines them on the transaction's connection)
        // and run in this order, so the reads come after the node's lock as before, in one round
        // trip instead of three: the statements a look waits on are most of a release's reaction
        // (bench: drain-reaction). The allocations are read even when the look ends before it needs them.
        const [node, [op], live] = await Promise.all([
          lockNode(tx, input.nodeId),
          tx.select().from(operations).where(eq(operations.id, input.operationId)),
          tx
            .select({ id: allocations.id, endsAt: allocations.endsAt, total: sql<number>`count(*) over ()` })
            .from(allocations)
            .where(and(eq(allocations.nodeId, input.nodeId), isOpen))
            .orderBy(sql`${allocations.endsAt} asc nulls last`, asc(allocations.id))
            .limit(REPORTED_ALLOCATIONS),
        ]);
        // A step retried after it committed (worker lost mid-task) answers what it did then.
        if (op?.status === 'succeeded') return { outcome: 'drained' };
        if (op?.status === 'cancelled') return { outcome: 'cancelled' };
        if (!op || isFinished(op.status)) return { outcome: 'finished' };
        if (!isDraining(node) || node.deletedAt) {
          await endCancelledOperation(tx, op.id, { actor: 'system:drain' });
          return { outcome: 'cancelled' };
        }
        if (live.length === 0) {
          // Drained and still cordoned: the node counts against its pool's budget until uncordoned.
          // The slot, the node's change and the operation's end are pipelined, all after the node's
          // lock: a budget read waits for the pool row (held shared from the slot to the commit) and
          // so sees the slot and `node.drained` together or neither; 2 round trips fewer than in turn.
          await Promise.all([
            holdDrained(tx, node, op.id),
            applyNodeChange(tx, node, finishDrain(node), { actor: 'system:drain', operationId: op.id }),
            finishOperation(tx, op.id, 'succeeded', { result: { drained: true } }),
          ]);
          waitedSeconds = (Date.now() - op.createdAt.getTime()) / 1_000;
          return { outcome: 'drained' };
        }
        const earliest = live[0]!.endsAt;
        return {
          outcome: 'waiting',
          liveAllocationCount: Number(live[0]!.total),
          liveAllocations: live.map((a) => ({ id: a.id, endsAt: a.endsAt?.toISOString() ?? null })),
          earliestEndsAt: earliest?.toISOString() ?? null,
        };
      });
      if (waitedSeconds !== null) metrics?.drained(waitedSeconds);
      return check;
    },

    /**
     * The deadline passed: release every live allocation of the node, in one transaction, if the
     * pool's disruption budget has a slot for it (or it holds one already); else queue for one.
     * Node, then pool, locked (db/disruptions.ts); the slot, the releases and one
     * `allocation.force-released` each commit together, so a retry after a crash finds the slot
     * held and nothing live, and releases nothing twice.
     */
    async forceReleaseDrain(input: {
      nodeId: string;
      operationId: string;
      deadline: string;
    }): Promise<ForcedRelease> {
      const release = await db.transaction(async (tx): Promise<ForcedRelease> => {
        const node = await lockNode(tx, input.nodeId);
        const op = await findOperation(tx, input.operationId);
        if (op?.status !== 'running' || !isDraining(node) || node.deletedAt) return { outcome: 'ended' };
        if (node.poolId) {
          const pooled = { id: node.id, poolId: node.poolId };
          const budget = await lockBudget(tx, node.poolId);
          if (!grantsSlot(budget, node.id)) {
            await markDisruption(tx, pooled, op.id, 'waiting');
            return { outcome: 'waiting', budget };
          }
          await markDisruption(tx, pooled, op.id, 'holding');
        }
        const released = await forceReleaseOpenAllocations(tx, node.id, {
          actor: FORCED_BY,
          operationId: op.id,
          deadline: input.deadline,
        });
        return { outcome: 'released', released: released.length };
      });
      if (release.outcome === 'waiting') metrics?.budgetWait();
      return release;
    },
  };
}

/**
 * The drain the node is still drained by, if any: the node is cordoned and not draining, the last
 * of its `node.drained` / `node.uncordoned` events is the `node.drained` of a drain that succeeded,
 * and it holds nothing live. Draining it again has nothing to do and answers that drain.
 *
 * Only an uncordon ends "drained" (taints and labels do not): the node went back into service and
 * may have taken work since, so a drain after it, even once an operator cordoned the node again by
 * hand, is a drain of its own that looks at the node afresh and makes its own operation.
 * Called under the node's lock, so no uncordon or allocation can slip in between.
 */
async function drainThatDrained(tx: Tx, node: NodeRow): Promise<OperationRow | undefined> {
  if (!node.cordoned || isDraining(node)) return undefined;
  const [last] = await tx
    .select({ type: events.type, operationId: events.operationId })
    .from(events)
    .where(and(eq(events.nodeId, node.id), inArray(events.type, ['node.drained', 'node.uncordoned'])))
    .orderBy(desc(events.id))
    .limit(1);
  if (last?.type !== 'node.drained' || !last.operationId) return undefined;
  const drain = await findOperation(tx, last.operationId);
  if (drain?.kind !== 'drain' || drain.status !== 'succeeded') return undefined;
  const [live] = await tx
    .select({ id: allocations.id })
    .from(allocations)
    .where(and(eq(allocations.nodeId, node.id), isOpen))
    .limit(1);
  return live ? undefined : drain;
}
