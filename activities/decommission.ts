import { and, eq, ne, sql } from 'drizzle-orm';
import { DECOMMISSION_STEPS, type DecommissionProgress, type DecommissionStep } from '../domain/progress';
import { moveTarget } from '../domain/provision';
import type { Db, Tx } from '../db/client';
import { revokeIdentity } from '../db/identity';
import { applyNodeChange, lockNode, type NodeRow } from '../db/nodes';
import { finishOperation, operationOf, recordProgress, type OperationRow } from '../db/operations';
import { progressOf } from '../db/queries/operations';
import {
  accelerators,
  inventoryCurrent,
  schedulerEntries,
  storageRoots,
  telemetryCurrent,
} from '../db/schema';
import { wakeNode } from '../db/wakeups';
import { beginOperationRun } from './begin';

type StepInput = { nodeId: string; operationId: string };

/** What each clean-up step changes, in the step's transaction on the locked node. */
const CLEANUP: Record<
  Exclude<DecommissionStep, 'finalizeDecommission'>,
  (tx: Tx, node: NodeRow) => Promise<void>
> = {
  /** Every certificate and credential revoked; the old identity can never join again. */
  async revokeNodeIdentity(tx, node) {
    await revokeIdentity(tx, node.id, 'decommissioned');
    await wakeNode(tx, node.id);
  },
  /** Accelerators marked `decommissioned`. */
  async decommissionAccelerators(tx, node) {
    await tx
      .update(accelerators)
      .set({ state: 'decommissioned', updatedAt: sql`now()` })
      .where(and(eq(accelerators.nodeId, node.id), ne(accelerators.state, 'decommissioned')));
  },
  /** Storage roots no longer writable. */
  async protectStorageRoots(tx, node) {
    await tx
      .update(storageRoots)
      .set({ state: 'read_only', updatedAt: sql`now()` })
      .where(and(eq(storageRoots.nodeId, node.id), eq(storageRoots.state, 'writable')));
  },
  /** The current scheduler, telemetry and inventory rows removed (history stays). */
  async removeCurrentRows(tx, node) {
    await tx.delete(schedulerEntries).where(eq(schedulerEntries.nodeId, node.id));
    await tx.delete(telemetryCurrent).where(eq(telemetryCurrent.nodeId, node.id));
    await tx.delete(inventoryCurrent).where(eq(inventoryCurrent.nodeId, node.id));
  },
};

export function createDecommissionActivities(db: Db) {
  /**
   * One step, one transaction on the locked node: nothing when the operation ended (a cancel
   * before the point of no return) or the step is done (a retry); else its change, and the step
   * recorded done on the operation. The first step is the point of no return: once it committed,
   * a cancel is refused.
   */
  const step =
    (name: keyof typeof CLEANUP) =>
    async (input: StepInput): Promise<DecommissionProgress> =>
      db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const op = await operationOf(tx, input.operationId);
        const done = stepsDone(op);
        if (op.status !== 'running' || done.includes(name)) return progressOf(op) as DecommissionProgress;
        await CLEANUP[name](tx, node);
        const next = DECOMMISSION_STEPS[DECOMMISSION_STEPS.indexOf(name) + 1] ?? null;
        const recorded = await recordProgress(tx, op.id, {
          phase: 'cleaning-up',
          waitingFor: { step: next, stepsDone: [...done, name] },
        });
        return progressOf(recorded!) as DecommissionProgress;
      });

  return {
    /**
     * The decommission's workflow begins its operation (`beginOperationRun`): its progress, or how
     * it ended when a cancel came before any worker took it.
     */
    async beginDecommission(input: { operationId: string }): Promise<DecommissionProgress> {
      const op = await db.transaction((tx) => beginOperationRun(tx, input.operationId, 'cleaning-up'));
      return progressOf(op) as DecommissionProgress;
    },

    revokeNodeIdentity: step('revokeNodeIdentity'),
    decommissionAccelerators: step('decommissionAccelerators'),
    protectStorageRoots: step('protectStorageRoots'),
    removeCurrentRows: step('removeCurrentRows'),

    /**
     * Finalize, one transaction: terminal state, the one `node.decommissioned`, operation
     * succeeded; the slot the node held in its pool's disruption budget is given back (a node out
     * for good), which wakes the drains waiting for one.
     */
    async finalizeDecommission(input: StepInput): Promise<DecommissionProgress> {
      return db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const op = await operationOf(tx, input.operationId);
        if (op.status !== 'running') return progressOf(op) as DecommissionProgress;
        const admitted = (op.result ?? {}) as {
          operator?: string;
          nodeGeneration?: number;
          dependencyDigest?: string;
        };
        await applyNodeChange(
          tx,
          node,
          {
            patch: {
              provisionState: moveTarget('finish-decommission'),
              liveness: 'decommissioned',
              connectivity: 'disconnected',
              cordoned: true,
              access: 'blocked',
            },
            event: {
              type: 'node.decommissioned',
              data: {
                operator: admitted.operator,
                nodeGeneration: admitted.nodeGeneration,
                dependencyDigest: admitted.dependencyDigest,
              },
            },
          },
          { actor: op.actor, reason: op.reason, operationId: op.id },
        );
        const finished = await finishOperation(tx, op.id, 'succeeded', {
          result: { ...op.result, decommissioned: true },
          waitingFor: { step: null, stepsDone: [...stepsDone(op), 'finalizeDecommission'] },
        });
        return progressOf(finished!) as DecommissionProgress;
      });
    },
  };
}

function stepsDone(op: OperationRow): DecommissionStep[] {
  return (op.waitingFor as { stepsDone?: DecommissionStep[] } | null)?.stepsDone ?? [];
}
