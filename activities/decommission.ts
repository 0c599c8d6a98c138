import type { Client } from '@temporalio/client';
import { and, eq, ne, sql } from 'drizzle-orm';
import { DrydockError } from '../domain/errors';
import { moveTarget } from '../domain/provision';
import type { Db } from '../db/client';
import { previewOf } from '../db/queries/decommission';
import { revokeIdentity } from '../db/identity';
import { applyNodeChange, lockNode, type NodeRow } from '../db/nodes';
import { finishOperation } from '../db/operations';
import {
  accelerators,
  inventoryCurrent,
  nodes,
  operations,
  schedulerEntries,
  storageRoots,
  telemetryCurrent,
} from '../db/schema';
import { wakeNode } from '../db/wakeups';
import type { BeginInput, BeginResult, DecommissionRequest } from '../workflows/definitions';
import { beginOperation } from './begin';
import { wakeBudgetWaiters } from './signals';
import type { Logger } from '../observability/log';

export function createDecommissionActivities(db: Db, temporal: Client, log: Logger) {
  return {
    /**
     * Admission, one locking transaction: recompute generation, digest and blockers; refuse on any
     * difference (CONFLICT) or blocker (INVALID_STATE); else `decommissioning` (out of placement at
     * once) and the operation `running`.
     */
    async admitDecommission(input: BeginInput<DecommissionRequest>): Promise<BeginResult> {
      return beginOperation(db, input, {
        kind: 'decommission',
        // Another execute meets admission, and the admitted node (its version moved on) matches no
        // preview.
        open: false,
        admit: async (tx, node) => refuseUnlessPreviewed(node, await previewOf(tx, node), input),
        result: {
          operator: input.operator,
          nodeGeneration: input.nodeGeneration,
          dependencyDigest: input.dependencyDigest,
        },
        async apply(tx, node) {
          // Admission is recorded by the operation; the audit event is the one `node.decommissioned`.
          const [admitted] = await tx
            .update(nodes)
            .set({
              provisionState: moveTarget('decommission'),
              version: node.version + 1,
              updatedAt: sql`now()`,
            })
            .where(eq(nodes.id, node.id))
            .returning();
          return { node: admitted! };
        },
      });
    },

    /** Cleanup 1: every certificate and credential revoked; the old identity can never join again. */
    async revokeNodeIdentity(input: { nodeId: string }): Promise<number> {
      return db.transaction(async (tx) => {
        const revoked = await revokeIdentity(tx, input.nodeId, 'decommissioned');
        await wakeNode(tx, input.nodeId);
        return revoked;
      });
    },

    /** Cleanup 2: accelerators marked `decommissioned`. */
    async decommissionAccelerators(input: { nodeId: string }): Promise<number> {
      const rows = await db
        .update(accelerators)
        .set({ state: 'decommissioned', updatedAt: sql`now()` })
        .where(and(eq(accelerators.nodeId, input.nodeId), ne(accelerators.state, 'decommissioned')))
        .returning({ id: accelerators.id });
      return rows.length;
    },

    /** Cleanup 3: storage roots no longer writable. */
    async protectStorageRoots(input: { nodeId: string }): Promise<number> {
      const rows = await db
        .update(storageRoots)
        .set({ state: 'read_only', updatedAt: sql`now()` })
        .where(and(eq(storageRoots.nodeId, input.nodeId), eq(storageRoots.state, 'writable')))
        .returning({ id: storageRoots.id });
      return rows.length;
    },

    /** Cleanup 4: the current scheduler, telemetry and inventory rows removed (history stays). */
    async removeCurrentRows(input: { nodeId: string }): Promise<number> {
      return db.transaction(async (tx) => {
        const removed = await Promise.all([
          tx.delete(schedulerEntries).where(eq(schedulerEntries.nodeId, input.nodeId)).returning(),
          tx.delete(telemetryCurrent).where(eq(telemetryCurrent.nodeId, input.nodeId)).returning(),
          tx.delete(inventoryCurrent).where(eq(inventoryCurrent.nodeId, input.nodeId)).returning(),
        ]);
        return removed.reduce((n, rows) => n + rows.length, 0);
      });
    },

    /**
     * Finalize, one transaction: terminal state, the one `node.decommissioned`, operation succeeded;
     * then wake the drains waiting for the budget slot a node out for good gives back (on a retry
     * too: the first attempt may have committed without waking them).
     */
    async finalizeDecommission(input: { nodeId: string; operationId: string }): Promise<'decommissioned'> {
      const poolId = await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        if (node.provisionState === 'decommissioned') return node.poolId;
        const [op] = await tx.select().from(operations).where(eq(operations.id, input.operationId));
        const admitted = (op?.result ?? {}) as {
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
          { actor: op?.actor ?? 'system:decommission', reason: op?.reason, operationId: input.operationId },
        );
        await finishOperation(tx, input.operationId, 'succeeded', {
          result: { ...admitted, decommissioned: true },
        });
        return node.poolId;
      });
      await wakeBudgetWaiters({ db, temporal, log }, poolId);
      return 'decommissioned';
    },
  };
}

/** Admission's refusals: a confirmation not in the preview, a preview out of date, blockers left. */
function refuseUnlessPreviewed(
  node: NodeRow,
  preview: Awaited<ReturnType<typeof previewOf>>,
  input: DecommissionRequest,
): void {
  if (!preview.confirmationIdentities.includes(input.confirm)) {
    throw new DrydockError(
      'INVALID_INPUT',
      `confirm must be exactly one of: ${preview.confirmationIdentities.join(', ')}`,
      {
        confirmationIdentities: preview.confirmationIdentities,
      },
    );
  }
  if (
    input.nodeGeneration !== preview.nodeGeneration ||
    input.dependencyDigest !== preview.dependencyDigest
  ) {
    throw new DrydockError(
      'CONFLICT',
      'the node or its dependencies changed since the preview: preview again',
      {
        nodeGeneration: preview.nodeGeneration,
        dependencyDigest: preview.dependencyDigest,
      },
    );
  }
  if (preview.blockers.length > 0) {
    throw new DrydockError('INVALID_STATE', `${preview.blockers.length} blocker(s) remain`, {
      provisionState: node.provisionState,
      blockers: preview.blockers,
    });
  }
}
