import { eq, inArray, sql } from 'drizzle-orm';
import { DrydockError } from '../domain/errors';
import { stepText } from '../domain/maintenance';
import {
  POOL_MAINTENANCE_LISTED,
  type MaintainedNode,
  type MaintenanceWaitingFor,
  type PoolMaintenanceWaitingFor,
} from '../domain/maintenance-progress';
import { isFinished } from '../domain/operation';
import { DRAIN_MAX_SLEEP_MS, type PoolMaintenanceProgress } from '../domain/progress';
import { derivedUlid } from '../domain/ulid';
import type { Db, DbOrTx } from '../db/client';
import { classifyDatabaseError } from '../db/errors';
import { finishOperation, recordProgress, type OperationRow } from '../db/operations';
import { progressOf } from '../db/queries/operations';
import { requestMaintenance } from '../db/requests/maintenance';
import type { PoolMaintenanceRecord } from '../db/requests/pool-maintenance';
import { nodes, operations } from '../db/schema';
import { beginOperationRun } from './begin';

/** Node maintenances requested in one transaction (its record locked until it commits). */
const SHARE = 25;

export function createPoolMaintenanceActivities(db: Db) {
  return {
    /**
     * One look at a rolling maintenance, in one transaction with its record locked: where each
     * selected node stands (from its maintenance's record), written on the operation. Every node
     * ended: the operation ends, `succeeded` when each maintenance did, else `failed` naming them.
     * Paused once `maxFailures` maintenances failed since it began or was last resumed: then
     * `startable` is 0 and the running ones finish. The first look begins the operation.
     */
    async lookAtPoolMaintenance(input: {
      operationId: string;
    }): Promise<{ progress: PoolMaintenanceProgress; startable: number }> {
      return db.transaction(async (tx) => {
        await tx.select().from(operations).where(eq(operations.id, input.operationId)).for('update');
        const op = await beginOperationRun(tx, input.operationId, 'maintaining');
        if (op.status !== 'running')
          return { progress: forTheWorkflow(progressOf(op) as PoolMaintenanceProgress), startable: 0 };
        const record = op.result as unknown as PoolMaintenanceRecord;
        const waitingFor = await stateOf(tx, op);
        const { counts } = waitingFor;
        if (counts.pending === 0 && counts.running === 0) {
          const failed = counts.failed + counts.cancelled;
          const ended =
            failed === 0
              ? await finishOperation(tx, op.id, 'succeeded', { waitingFor })
              : await finishOperation(tx, op.id, 'failed', {
                  waitingFor,
                  error: {
                    message: `${failed} of ${record.nodeIds.length} nodes were not maintained: ${describeFailed(waitingFor.nodes)}`,
                    failed,
                  },
                });
          return { progress: forTheWorkflow(progressOf(ended!) as PoolMaintenanceProgress), startable: 0 };
        }
        const recorded = await recordProgress(tx, op.id, {
          phase: waitingFor.paused ? 'paused' : 'maintaining',
          waitingFor,
          // Woken by each node maintenance's end and by a resume; this look is the backstop.
          nextCheckAt: new Date(Date.now() + DRAIN_MAX_SLEEP_MS),
        });
        const startable = waitingFor.paused
          ? 0
          : Math.min(record.maxConcurrent - counts.running, counts.pending);
        return {
          progress: forTheWorkflow(progressOf(recorded!) as PoolMaintenanceProgress),
          startable: Math.max(0, startable),
        };
      });
    },

    /**
     * The next node maintenances, up to `count`, requested in shares of `SHARE`: one transaction
     * each, with the record locked, that requests no more than `maxConcurrent` allows at that
     * moment. Each node's maintenance is requested as any is (its start in the outbox), under a
     * savepoint, with an id derived from the rolling maintenance's and the node's, so a wave
     * requested again finds what it recorded; a refused one counts as failed, with the refusal.
     */
    async requestNodeMaintenances(input: { operationId: string; count: number }): Promise<number> {
      let requested = 0;
      while (requested < input.count) {
        const share = await db.transaction(async (tx) => {
          const [op] = await tx
            .select()
            .from(operations)
            .where(eq(operations.id, input.operationId))
            .for('update');
          if (op?.status !== 'running') return 0;
          const record = op.result as unknown as PoolMaintenanceRecord;
          const state = await stateOf(tx, op);
          if (state.paused) return 0;
          const room = Math.min(SHARE, input.count - requested, record.maxConcurrent - state.counts.running);
          const reached = await reachedNodes(tx, op);
          const next = record.nodeIds.filter((id) => !reached.has(id)).slice(0, Math.max(0, room));
          const refused: PoolMaintenanceRecord['refused'] = [];
          for (const nodeId of next) {
            try {
              await tx.transaction((savepoint) =>
                requestMaintenance(savepoint, nodeId, {
                  actor: op.actor,
                  reason: op.reason,
                  plan: record.plan,
                  operationId: `op_${derivedUlid(op.id.slice('op_'.length), nodeId)}`,
                  parentOperationId: op.id,
                }),
              );
            } catch (error) {
              const refusal = error instanceof DrydockError ? error : classifyDatabaseError(error);
              if (!(refusal instanceof DrydockError)) throw error;
              refused.push({ nodeId, reason: refusal.message });
            }
          }
          if (refused.length > 0) {
            await tx
              .update(operations)
              .set({ result: { ...record, refused: [...record.refused, ...refused] } })
              .where(eq(operations.id, op.id));
          }
          return next.length;
        });
        if (share === 0) break;
        requested += share;
      }
      return requested;
    },
  };
}

/** The nodes a rolling maintenance reached: a maintenance requested for them, or refused. */
async function reachedNodes(db: DbOrTx, op: OperationRow): Promise<Set<string>> {
  const record = op.result as unknown as PoolMaintenanceRecord;
  const children = await db
    .select({ nodeId: operations.nodeId })
    .from(operations)
    .where(eq(operations.parentOperationId, op.id));
  return new Set([...children.map((c) => c.nodeId!), ...record.refused.map((r) => r.nodeId)]);
}

/** Where every selected node of the rolling maintenance stands, from the records of its maintenances. */
async function stateOf(db: DbOrTx, op: OperationRow): Promise<PoolMaintenanceWaitingFor> {
  const record = op.result as unknown as PoolMaintenanceRecord;
  const steps = record.plan.steps.length;
  const children = await db
    .select({
      id: operations.id,
      nodeId: operations.nodeId,
      status: operations.status,
      waitingFor: operations.waitingFor,
      error: operations.error,
      hostname: nodes.hostname,
    })
    .from(operations)
    .innerJoin(nodes, eq(nodes.id, operations.nodeId))
    .where(eq(operations.parentOperationId, op.id))
    .orderBy(sql`${operations.id}`);
  const refused = record.refused.length
    ? await db
        .select({ id: nodes.id, hostname: nodes.hostname })
        .from(nodes)
        .where(
          inArray(
            nodes.id,
            record.refused.map((r) => r.nodeId),
          ),
        )
    : [];
  const counts = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
  const atStep = Array.from({ length: steps }, () => 0);
  const doneStep = Array.from({ length: steps }, () => 0);
  const listed: MaintainedNode[] = [];
  for (const child of children) {
    const w = child.waitingFor as MaintenanceWaitingFor | null;
    const status = isFinished(child.status) ? (child.status as MaintainedNode['status']) : 'running';
    counts[status]++;
    const at = w ? Math.min(w.step, steps - 1) : 0;
    w?.steps.forEach((s, i) => {
      if (s.outcome === 'done') doneStep[i]!++;
    });
    if (status === 'running' && w && w.step < steps) atStep[at]!++;
    const failedStep = w?.steps.find((s) => s.outcome === 'failed');
    listed.push({
      nodeId: child.nodeId!,
      hostname: child.hostname,
      operationId: child.id,
      status,
      step: status === 'succeeded' ? null : (failedStep?.step ?? w?.steps[at]?.step ?? null),
      reason:
        failedStep?.reason ??
        (status === 'cancelled' ? 'its maintenance was cancelled' : null) ??
        (child.error as { reason?: string } | null)?.reason ??
        null,
    });
  }
  for (const r of record.refused) {
    counts.failed++;
    const hostname = refused.find((n) => n.id === r.nodeId)?.hostname ?? null;
    listed.push({
      nodeId: r.nodeId,
      hostname,
      operationId: null,
      status: 'failed',
      step: null,
      reason: r.reason,
    });
  }
  counts.pending = record.nodeIds.length - children.length - record.refused.length;
  const failuresSinceResume = counts.failed + counts.cancelled - record.failedAtResume;
  return {
    counts,
    atStep,
    doneStep,
    steps: record.plan.steps.map(stepText),
    nodes: listed.slice(0, POOL_MAINTENANCE_LISTED),
    maxConcurrent: record.maxConcurrent,
    maxFailures: record.maxFailures,
    failuresSinceResume,
    paused: failuresSinceResume >= record.maxFailures && counts.pending > 0,
  };
}

/** How many nodes the workflow's copy of the progress lists: the failed ones first. */
const WORKFLOW_LISTED = 20;

/**
 * The progress as the workflow keeps it (its `progress` query, its current details): every count,
 * and only the nodes that failed or run, at most 20. Each look's answer is recorded in the
 * workflow's history, so a list of every node (200 of them, with hostnames and reasons) would
 * grow it by megabytes over a rolling maintenance; the record (`GET /v1/operations/{id}`) lists
 * them all.
 */
function forTheWorkflow(progress: PoolMaintenanceProgress): PoolMaintenanceProgress {
  const w = progress.waitingFor;
  if (!w) return progress;
  const rank = (n: MaintainedNode) =>
    n.status === 'failed' || n.status === 'cancelled' ? 0 : n.status === 'running' ? 1 : 2;
  const nodes = w.nodes
    .filter((n) => rank(n) < 2)
    .sort((a, b) => rank(a) - rank(b))
    .slice(0, WORKFLOW_LISTED);
  return { ...progress, waitingFor: { ...w, nodes } };
}

/** The first few nodes that were not maintained, and why. */
function describeFailed(listed: MaintainedNode[]): string {
  const failed = listed.filter((n) => n.status === 'failed' || n.status === 'cancelled');
  const shown = failed
    .slice(0, 5)
    .map((n) => `${n.hostname ?? n.nodeId} (${n.step ?? 'request'}: ${n.reason ?? n.status})`);
  return failed.length > shown.length ? `${shown.join(', ')}, …` : shown.join(', ');
}
