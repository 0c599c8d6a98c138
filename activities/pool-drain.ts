import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { and, asc, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import { DrydockError } from '../domain/errors';
import { isFinished, type CancellationRequest } from '../domain/operation';
import { OPEN_OPERATION_STATUSES } from '../domain/operation-status';
import { isTerminal, PROVISION_STATES } from '../domain/provision';
import { formatSelector, type Selector } from '../domain/selector';
import type { Db, DbOrTx } from '../db/client';
import { recordCancellation } from '../db/cancellation';
import { classifyDatabaseError } from '../db/errors';
import { carriesLabels } from '../db/queries/nodes';
import { finishOperation, findOperation, operationView, type OperationRow } from '../db/operations';
import { disruptions, nodes, operations, pools } from '../db/schema';
import {
  drainWorkflowId,
  type BeginInput,
  type DrainRequest,
  type FailedNode,
  type PoolBeginInput,
  type PoolDrainBegun,
  type PoolDrainCounts,
  type PoolDrainRequest,
} from '../workflows/definitions';
import { answeredBefore, recordOperation } from './begin';
import { cancelRequester } from './cancel';
import { createDrainActivities } from './drain';

/** One node's drain as a pool drain asks for it: the operation id the pool drain minted, and its deadline. */
export interface NodeDrainAsk {
  nodeId: string;
  operationId: string;
  deadline: string | null;
}

/**
 * How a node's begin went: `began` (this operation, the pool drain starts its child), `joined` (a
 * drain already running; followed through its record), `drained` (still drained by an earlier
 * drain), or `refused` (the begin's refusal).
 */
export type NodeDrainBegin =
  | { nodeId: string; state: 'began'; operationId: string; hostname: string; tenantId: string | null }
  | { nodeId: string; state: 'joined' | 'drained'; operationId: string }
  | { nodeId: string; state: 'refused'; code: string; message: string };

/** A node drain's record as the pool drain follows it. */
export interface NodeDrainRecord {
  operationId: string;
  status: OperationRow['status'];
  error: Record<string, unknown> | null;
  /** Past its deadline and waiting for a slot of the pool's disruption budget. */
  waitingForBudget: boolean;
}

/** Nodes a pool drain takes: not deleted, not out of the fleet for good (decommissioned, rejected). */
const TERMINAL_STATES = PROVISION_STATES.filter(isTerminal);

export function createPoolDrainActivities(db: Db, temporal: Client) {
  const { beginDrain } = createDrainActivities(db);
  return {
    /**
     * The pool drain's begin, in one transaction with the pool row locked: answer the operation this
     * begin made, its Idempotency-Key's, or the pool's open pool drain; else select the nodes (the
     * snapshot the drain works through) and record the operation `running` with them.
     */
    async beginPoolDrain(input: PoolBeginInput<PoolDrainRequest>): Promise<PoolDrainBegun> {
      return db.transaction(async (tx) => {
        const [pool] = await tx.select().from(pools).where(eq(pools.id, input.poolId)).for('update');
        if (!pool)
          throw new DrydockError('NOT_FOUND', `pool ${input.poolId} not found`, { poolId: input.poolId });
        const answer = (operation: OperationRow, created: boolean): PoolDrainBegun => ({
          operation: operationView(operation),
          created,
          nodeIds: (operation.result?.nodeIds as string[] | undefined) ?? [],
        });
        const earlier = await answeredBefore(tx, input);
        if (earlier) return answer(earlier.operation, earlier.created);
        const [open] = await tx
          .select()
          .from(operations)
          .where(
            and(
              eq(operations.poolId, pool.id),
              eq(operations.kind, 'pool-drain'),
              inArray(operations.status, OPEN_OPERATION_STATUSES),
            ),
          );
        if (open) return answer(open, false);
        const nodeIds = await selectNodes(tx, pool.id, input.selector);
        const operation = await recordOperation(tx, input, {
          kind: 'pool-drain',
          nodeId: null,
          poolId: pool.id,
          result: {
            selector: formatSelector(input.selector),
            maxConcurrent: input.maxConcurrent,
            deadline: input.deadline,
            nodeIds,
          },
        });
        return answer(operation, true);
      });
    },

    /**
     * The begins of one wave of node drains, each the node drain's own begin (one transaction per
     * node, under the operation id the pool drain minted, so a retried wave finds what it did).
     */
    async beginNodeDrains(input: {
      actor: string;
      reason: string | null;
      nodes: NodeDrainAsk[];
    }): Promise<NodeDrainBegin[]> {
      return Promise.all(
        input.nodes.map(async (ask): Promise<NodeDrainBegin> => {
          try {
            const request: BeginInput<DrainRequest> = {
              actor: input.actor,
              reason: input.reason,
              deadline: ask.deadline,
              idempotencyScope: null,
              idempotencyKey: null,
              requestHash: null,
              nodeId: ask.nodeId,
              workflowId: drainWorkflowId(ask.nodeId),
              operationId: ask.operationId,
            };
            const begun = await beginDrain(request);
            const { operation, node } = begun;
            if (begun.created) {
              return {
                nodeId: ask.nodeId,
                state: 'began',
                operationId: operation.id,
                hostname: node.hostname,
                tenantId: node.tenantId,
              };
            }
            const state = isFinished(operation.status) ? 'drained' : 'joined';
            return { nodeId: ask.nodeId, state, operationId: operation.id };
          } catch (error) {
            const refusal = error instanceof DrydockError ? error : classifyDatabaseError(error);
            if (!(refusal instanceof DrydockError)) throw error;
            return { nodeId: ask.nodeId, state: 'refused', code: refusal.code, message: refusal.message };
          }
        }),
      );
    },

    /** The records of node drains: how each stands, and whether it waits for the disruption budget. */
    async readNodeDrains(input: { operationIds: string[] }): Promise<NodeDrainRecord[]> {
      if (input.operationIds.length === 0) return [];
      const rows = await db
        .select({
          operationId: operations.id,
          status: operations.status,
          error: operations.error,
          waiting: sql<boolean>`${disruptions.nodeId} is not null`,
        })
        .from(operations)
        .leftJoin(
          disruptions,
          and(eq(disruptions.operationId, operations.id), eq(disruptions.state, 'waiting')),
        )
        .where(inArray(operations.id, input.operationIds));
      return rows.map((r) => ({
        operationId: r.operationId,
        status: r.status,
        error: r.error,
        waitingForBudget: r.waiting,
      }));
    },

    /** Every node drain ended: the pool drain `succeeded` when all drained, else `failed` naming them. */
    async finishPoolDrain(input: {
      operationId: string;
      counts: PoolDrainCounts;
      failed: FailedNode[];
    }): Promise<void> {
      await db.transaction(async (tx) => {
        const op = await findOperation(tx, input.operationId);
        if (!op || isFinished(op.status)) return;
        const result = { ...op.result, counts: input.counts, failed: input.failed };
        if (input.failed.length === 0) {
          await finishOperation(tx, op.id, 'succeeded', { result });
          return;
        }
        const total = input.counts.drained + input.counts.failed;
        await finishOperation(tx, op.id, 'failed', {
          result,
          error: {
            message: `${input.failed.length} of ${total} nodes did not drain: ${describeFailed(input.failed)}`,
            failed: input.failed.length,
          },
        });
      });
    },

    /**
     * The pool drain was cancelled, in one transaction: the operation `cancelled`, with who asked
     * (`cancellation` as DELETE /v1/operations/{id} recorded it; a cancel from the Temporal UI
     * writes none, so `temporal`). Answers the request, whose `children` says what becomes of the
     * node drains still running.
     */
    async cancelPoolDrain(input: {
      operationId: string;
      counts: PoolDrainCounts;
      failed: FailedNode[];
      /** The operations of the node drains it started that still run. */
      children: string[];
    }): Promise<CancellationRequest> {
      // Asked without a record (the Temporal UI): the identity on the workflow's cancel request.
      const recorded = await findOperation(db, input.operationId);
      const asked: CancellationRequest = recorded?.cancellation ?? {
        by: await cancelRequester(temporal, Context.current().info.workflowExecution!),
        reason: null,
        at: new Date().toISOString(),
        children: 'finish',
      };
      return db.transaction(async (tx) => {
        const [op] = await tx
          .select()
          .from(operations)
          .where(eq(operations.id, input.operationId))
          .for('update');
        const cancellation = op?.cancellation ?? asked;
        if (!op || isFinished(op.status)) return cancellation;
        await tx.update(operations).set({ cancellation }).where(eq(operations.id, op.id));
        // Node drains it is about to cancel name who asked too (their clean-up reads the record).
        if (cancellation.children === 'cancel') {
          const { children: _, ...request } = cancellation;
          for (const child of input.children) await recordCancellation(tx, child, request);
        }
        await finishOperation(tx, op.id, 'cancelled', {
          result: { ...op.result, counts: input.counts, failed: input.failed },
        });
        return cancellation;
      });
    },
  };
}

/** The selected nodes of a pool, by id: live, in the fleet, carrying every label of the selector. */
async function selectNodes(tx: DbOrTx, poolId: string, selector: Selector): Promise<string[]> {
  const rows = await tx
    .select({ id: nodes.id })
    .from(nodes)
    .where(
      and(
        eq(nodes.poolId, poolId),
        isNull(nodes.deletedAt),
        notInArray(nodes.provisionState, TERMINAL_STATES),
        ...carriesLabels(selector),
      ),
    )
    .orderBy(asc(nodes.id));
  return rows.map((r) => r.id);
}

/** The first few failed nodes and why, for the operation's error message. */
function describeFailed(failed: FailedNode[]): string {
  const shown = failed.slice(0, 5).map((f) => `${f.nodeId} (${f.code}: ${f.message})`);
  return failed.length > shown.length ? `${shown.join(', ')}, …` : shown.join(', ');
}
