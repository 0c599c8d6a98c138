import { and, asc, eq, inArray, isNull, notInArray } from 'drizzle-orm';
import type { Deadline } from '../../domain/deadline';
import { DrydockError } from '../../domain/errors';
import { OPEN_OPERATION_STATUSES } from '../../domain/operation-status';
import { POOL_DRAIN_LISTED, poolDrainDeadline } from '../../domain/progress';
import { isTerminal, PROVISION_STATES } from '../../domain/provision';
import { formatSelector, type Selector } from '../../domain/selector';
import type { Tx } from '../client';
import type { OperationRow } from '../operations';
import { enqueueStart } from '../outbox';
import { carriesLabels } from '../queries/nodes';
import { nodes, operations, pools } from '../schema';
import { recordedBefore, recordOperation, type OperationRequest } from './record';

/** A pool drain's request: which nodes (label selector; `{}` is all of them), how many at a time. */
export interface PoolDrainRequest extends OperationRequest {
  selector: Selector;
  maxConcurrent: number;
  deadline: Deadline | null;
}

/** What a pool drain's record keeps of its request, and the nodes it selected. */
export interface PoolDrainRecord {
  selector: string;
  maxConcurrent: number;
  deadline: Deadline | null;
  nodeIds: string[];
}

/** Nodes a pool drain takes: not deleted, not out of the fleet for good (decommissioned, rejected). */
const TERMINAL_STATES = PROVISION_STATES.filter(isTerminal);

/**
 * The pool drain, requested in the caller's transaction with the pool row locked: answer the
 * operation its Idempotency-Key stands for, or the pool's open pool drain; else select the nodes
 * (the snapshot it works through) and record the operation `pending` with them, and its start.
 */
export async function requestPoolDrain(
  tx: Tx,
  poolId: string,
  request: PoolDrainRequest,
): Promise<{ operation: OperationRow; created: boolean }> {
  const [pool] = await tx.select().from(pools).where(eq(pools.id, poolId)).for('update');
  if (!pool) throw new DrydockError('NOT_FOUND', `pool ${poolId} not found`, { poolId });
  const earlier = await recordedBefore(tx, request);
  if (earlier) return earlier;
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
  if (open) return { operation: open, created: false };
  const nodeIds = await selectPoolNodes(tx, pool.id, request.selector);
  const record: PoolDrainRecord = {
    selector: formatSelector(request.selector),
    maxConcurrent: request.maxConcurrent,
    deadline: request.deadline,
    nodeIds,
  };
  const { deadline, graceAfterStart } = poolDrainDeadline(request.deadline);
  const operation = await recordOperation(tx, request, {
    kind: 'pool-drain',
    nodeId: null,
    poolId: pool.id,
    result: { ...record },
    deadline: deadline ? new Date(deadline) : null,
    waitingFor: {
      counts: { pending: nodeIds.length, draining: 0, waitingForBudget: 0, drained: 0, failed: 0 },
      nodes: {
        pending: nodeIds.slice(0, POOL_DRAIN_LISTED),
        draining: [],
        waitingForBudget: [],
        drained: [],
        failed: [],
      },
      maxConcurrent: request.maxConcurrent,
      graceAfterStart,
      budget: null,
      // Its rows begin when a worker begins it.
      timeline: [],
    },
  });
  await enqueueStart(tx, operation);
  return { operation, created: true };
}

/** The selected nodes of a pool, by id: live, in the fleet, carrying every label of the selector. */
export async function selectPoolNodes(tx: Tx, poolId: string, selector: Selector): Promise<string[]> {
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
