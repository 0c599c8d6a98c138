import { and, eq, inArray } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { stepText, type MaintenancePlan } from '../../domain/maintenance';
import type { PoolMaintenanceWaitingFor } from '../../domain/maintenance-progress';
import { OPEN_OPERATION_STATUSES } from '../../domain/operation-status';
import { formatSelector, type Selector } from '../../domain/selector';
import type { Tx } from '../client';
import type { OperationRow } from '../operations';
import { enqueueStart } from '../outbox';
import { operations, pools } from '../schema';
import { selectPoolNodes } from './pool-drain';
import { recordedBefore, recordOperation, type OperationRequest } from './record';

/** A rolling maintenance's request: which nodes, the plan for each, how many at once, when to pause. */
export interface PoolMaintenanceRequest extends OperationRequest {
  selector: Selector;
  plan: MaintenancePlan;
  maxConcurrent: number;
  maxFailures: number;
}

/** What a rolling maintenance's record keeps of its request, and the nodes it selected. */
export interface PoolMaintenanceRecord {
  selector: string;
  plan: MaintenancePlan;
  maxConcurrent: number;
  maxFailures: number;
  nodeIds: string[];
  /** Failed node maintenances when it was last resumed: only later ones count toward `maxFailures`. */
  failedAtResume: number;
  /** Nodes whose maintenance request was refused (deleted, blocked, not adopted since the selection). */
  refused: { nodeId: string; reason: string }[];
}

/**
 * The rolling maintenance of a pool (docs/lifecycle/maintenance.md), in the caller's transaction
 * with the pool row locked: the operation its Idempotency-Key stands for, or the pool's open one;
 * else the selected nodes (the snapshot it works through) recorded with the plan, `pending`, and
 * its start in the outbox. No node is touched yet: each is cordoned when its turn comes.
 */
export async function requestPoolMaintenance(
  tx: Tx,
  poolId: string,
  request: PoolMaintenanceRequest,
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
        eq(operations.kind, 'pool-maintenance'),
        inArray(operations.status, OPEN_OPERATION_STATUSES),
      ),
    );
  if (open) return { operation: open, created: false };
  const nodeIds = await selectPoolNodes(tx, pool.id, request.selector);
  const record: PoolMaintenanceRecord = {
    selector: formatSelector(request.selector),
    plan: request.plan,
    maxConcurrent: request.maxConcurrent,
    maxFailures: request.maxFailures,
    nodeIds,
    failedAtResume: 0,
    refused: [],
  };
  const steps = request.plan.steps.map(stepText);
  const waitingFor: PoolMaintenanceWaitingFor = {
    counts: { pending: nodeIds.length, running: 0, succeeded: 0, failed: 0, cancelled: 0 },
    atStep: steps.map(() => 0),
    doneStep: steps.map(() => 0),
    steps,
    nodes: [],
    maxConcurrent: request.maxConcurrent,
    maxFailures: request.maxFailures,
    failuresSinceResume: 0,
    paused: false,
  };
  const operation = await recordOperation(tx, request, {
    kind: 'pool-maintenance',
    nodeId: null,
    poolId: pool.id,
    result: { ...record },
    waitingFor,
  });
  await enqueueStart(tx, operation);
  return { operation, created: true };
}
