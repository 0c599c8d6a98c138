import { and, eq, inArray, sql } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES } from '../domain/command-status';
import { OPEN_OPERATION_STATUSES } from '../domain/operation-status';
import { finishDrain } from '../domain/controls';
import { isDraining } from '../domain/node';
import { isFinished, isPoolKind, type CancellationRequest } from '../domain/operation';
import type { MaintenanceWaitingFor } from '../domain/maintenance-progress';
import type { AttemptRecord } from '../domain/remediation';
import type { Tx } from './client';
import { stopWaiting } from './disruptions';
import { appendEvent } from './events';
import { applyNodeChange, lockNode, type NodeRow } from './nodes';
import { finishOperation, openOperation, type OperationRow } from './operations';
import { withdrawPendingCommands } from './maintenance';
import { forgetPurgedNode } from './purge';
import { escalateRemediation, remediationAttempts } from './remediation';
import { enqueueWake } from './outbox';
import { nodeCommands, operations } from './schema';

/** Who a cancellation names as its actor when it carries no request (a cancel from the Temporal UI). */
export const TEMPORAL_ACTOR = 'temporal';

/**
 * Records a cancellation request on an open operation, under its row lock; the first request wins,
 * and the operation as it now is comes back (unchanged when it finished or was already asked).
 */
export async function recordCancellation(
  tx: Tx,
  operationId: string,
  request: CancellationRequest,
): Promise<OperationRow | undefined> {
  const [op] = await tx.select().from(operations).where(eq(operations.id, operationId)).for('update');
  if (!op || isFinished(op.status) || op.cancellation) return op;
  const [asked] = await tx
    .update(operations)
    .set({ cancellation: request, updatedAt: sql`now()` })
    .where(eq(operations.id, operationId))
    .returning();
  return asked;
}

/**
 * Ends a cancelled operation, in the caller's transaction: the node put back as its kind needs, the
 * operation `cancelled`, one event, the actor being whoever the recorded request names (or `actor`),
 * and its workflow woken (it finds its record finished and ends). Idempotent: an operation already
 * finished is left as it is. Every door that cancels comes here — DELETE /v1/operations/{id}, an
 * uncordon, a purge that supersedes a drain, and the clean-up a workflow runs when the Temporal UI
 * cancels it.
 *
 * - drain: `draining` comes off (the node stays cordoned: an operator uncordons it), its waiting
 *   place in the pool's disruption budget is given up, `node.drain.cancelled`.
 * - purge: the unanswered purge command is withdrawn and the node stays `purging` (out of placement;
 *   purge again, or DELETE it), `node.purge.cancelled`. A purge the node already acknowledged is
 *   past cancelling: the node is forgotten as on any ack and the purge `succeeded`.
 * - remediation: escalated, as any remediation that ends unhealed — maintenance on,
 *   `node.remediation.escalated` (the attempts: the workflow's, or as its commands record them).
 * - pool drain: no node of its own; the node drains it started are cancelled too when the request
 *   says `children: "cancel"` (each as above, naming the same request), else left to finish.
 * - decommission: only before its point of no return (the caller checks): `decommissioning` is
 *   undone, the node back in the state it was admitted from.
 */
export async function endCancelledOperation(
  tx: Tx,
  operationId: string,
  options: { actor: string; attempts?: AttemptRecord[] },
): Promise<OperationRow | undefined> {
  const [peek] = await tx.select().from(operations).where(eq(operations.id, operationId));
  if (!peek) return undefined;
  // The node first, then the operation: the order every lifecycle step locks in.
  if (isPoolKind(peek.kind)) await cancelChildren(tx, peek);
  const node = peek.nodeId ? await lockNode(tx, peek.nodeId) : null;
  const [op] = await tx.select().from(operations).where(eq(operations.id, operationId)).for('update');
  if (!op || isFinished(op.status)) return op;
  const actor = op.cancellation?.by ?? options.actor;
  const context = { actor, reason: op.cancellation?.reason ?? null, operationId: op.id };
  if (op.kind === 'decommission' && !decommissionCancellable(op)) return op;
  await enqueueWake(tx, op.workflowId, `cancelled by ${actor}`);
  // Cancelled with no request recorded (the Temporal UI's cancel): the record says who it was.
  const unrecorded = op.cancellation
    ? {}
    : {
        cancellation: {
          by: actor,
          reason: null,
          at: new Date().toISOString(),
          ...(isPoolKind(op.kind) ? { children: 'finish' as const } : {}),
        },
      };
  const cancelled = () => finishOperation(tx, op.id, 'cancelled', unrecorded);

  if (!node) return cancelled();
  switch (op.kind) {
    case 'drain': {
      await stopWaiting(tx, node.id);
      if (isDraining(node)) {
        await applyNodeChange(
          tx,
          node,
          { ...finishDrain(node), event: { type: 'node.drain.cancelled' } },
          context,
        );
      } else {
        await appendEvent(tx, {
          nodeId: node.id,
          tenantId: node.tenantId,
          type: 'node.drain.cancelled',
          ...context,
        });
      }
      return cancelled();
    }
    case 'purge': {
      const [command] = await tx
        .select()
        .from(nodeCommands)
        .where(and(eq(nodeCommands.operationId, op.id), eq(nodeCommands.kind, 'purge')));
      if (command?.status === 'acked') return forgetPurgedNode(tx, node, op.id);
      const withdrawn = await withdrawCommands(tx, op.id);
      await appendEvent(tx, {
        nodeId: node.id,
        tenantId: node.tenantId,
        type: 'node.purge.cancelled',
        data: { commandId: command?.id ?? null, withdrawn: withdrawn > 0 },
        ...context,
      });
      return cancelled();
    }
    case 'remediation':
      return escalateRemediation(tx, node, op, {
        reason: 'remediation cancelled',
        attempts: options.attempts ?? (await remediationAttempts(tx, op.id)),
        status: 'cancelled',
        actor,
      }).then((escalated) => escalated.operation);
    case 'decommission':
      return cancelDecommission(tx, node, op, context).then(cancelled);
    case 'pool-drain':
    case 'pool-maintenance':
      return cancelled();
    case 'maintenance': {
      // Its drain goes with it (the node stays cordoned, as a cancelled drain leaves it); what its
      // node has not started is withdrawn, what runs there is left to report.
      const drain = await openOperation(tx, node.id, 'drain');
      if (drain?.parentOperationId === op.id) {
        await recordCancellation(tx, drain.id, {
          by: actor,
          reason: context.reason ?? `its maintenance ${op.id} was cancelled`,
          at: new Date().toISOString(),
        });
        await endCancelledOperation(tx, drain.id, { actor });
      }
      await withdrawPendingCommands(tx, op.id);
      const w = op.waitingFor as MaintenanceWaitingFor | null;
      await appendEvent(tx, {
        nodeId: node.id,
        tenantId: node.tenantId,
        type: 'node.maintenance.cancelled',
        data: { index: w?.step ?? 0, step: w?.steps[w.step]?.step ?? null },
        ...context,
      });
      return cancelled();
    }
  }
}

/**
 * Cancels the node's open drain, if any, in the caller's transaction (the node locked): the request
 * recorded (`by`, `reason`) and the drain's clean-up run (`endCancelledOperation`, which wakes its
 * workflow). An uncordon ends a drain this way, and so does a purge that begins on a draining node
 * (superseded).
 */
export async function cancelOpenDrain(
  tx: Tx,
  nodeId: string,
  ask: { by: string; reason: string | null },
): Promise<void> {
  const drain = await openOperation(tx, nodeId, 'drain');
  if (!drain) return;
  await recordCancellation(tx, drain.id, { ...ask, at: new Date().toISOString() });
  await endCancelledOperation(tx, drain.id, { actor: ask.by });
}

/** A purge begins on a draining node: its drain ends, superseded; the node as it now is. */
export async function supersedeDrain(
  tx: Tx,
  node: NodeRow,
  by: { actor: string; operation: { id: string; kind: string } },
): Promise<NodeRow> {
  if (!isDraining(node)) return node;
  const reason = `superseded by ${by.operation.kind} ${by.operation.id}`;
  await cancelOpenDrain(tx, node.id, { by: by.actor, reason });
  return lockNode(tx, node.id);
}

/**
 * Closes an operation whose workflow closed without finishing it (terminated or timed out in
 * Temporal, so no clean-up of its own ran): `failed` with `WORKFLOW_CLOSED` and the workflow's
 * status, the node's reasons repaired so the next operation starts afresh, one
 * `node.operation.abandoned`. Idempotent, like every step.
 */
export async function closeAbandonedOperation(
  tx: Tx,
  operationId: string,
  workflowStatus: string,
): Promise<OperationRow | undefined> {
  const [peek] = await tx.select().from(operations).where(eq(operations.id, operationId));
  if (!peek) return undefined;
  const node = peek.nodeId ? await lockNode(tx, peek.nodeId) : null;
  const failed = await finishOperation(tx, operationId, 'failed', {
    error: { code: 'WORKFLOW_CLOSED', workflowStatus },
  });
  if (!failed || !node) return failed;
  await withdrawCommands(tx, failed.id);
  const context = { actor: 'system:reconciler', operationId: failed.id };
  const event = { type: 'node.operation.abandoned', data: { kind: failed.kind, workflowStatus } } as const;
  if (failed.kind === 'drain') {
    await stopWaiting(tx, node.id);
    if (isDraining(node)) {
      await applyNodeChange(tx, node, { ...finishDrain(node), event }, context);
      return failed;
    }
  }
  await appendEvent(tx, { nodeId: node.id, tenantId: node.tenantId, ...event, ...context });
  return failed;
}

/** Withdraws the operation's commands the node has not answered; how many there were. */
async function withdrawCommands(tx: Tx, operationId: string): Promise<number> {
  const rows = await tx
    .update(nodeCommands)
    .set({ status: 'cancelled', finishedAt: sql`now()` })
    .where(
      and(eq(nodeCommands.operationId, operationId), inArray(nodeCommands.status, OPEN_COMMAND_STATUSES)),
    )
    .returning({ id: nodeCommands.id });
  return rows.length;
}

/**
 * A pool operation cancelled with `children: "cancel"`: each node operation it started that is
 * still open is cancelled as well, naming the same request. Each child's node is locked before the
 * child's row, the order its own steps lock in (a node maintenance's look holds its node and waits
 * for its row: locking the row first deadlocked with it).
 */
async function cancelChildren(tx: Tx, pool: OperationRow): Promise<void> {
  const request = pool.cancellation;
  if (isFinished(pool.status) || request?.children !== 'cancel') return;
  const { children: _, ...ask } = request;
  const open = await tx
    .select({ id: operations.id, nodeId: operations.nodeId })
    .from(operations)
    .where(
      and(eq(operations.parentOperationId, pool.id), inArray(operations.status, OPEN_OPERATION_STATUSES)),
    );
  for (const child of open) {
    if (child.nodeId) await lockNode(tx, child.nodeId);
    await recordCancellation(tx, child.id, ask);
    await endCancelledOperation(tx, child.id, { actor: ask.by });
  }
}

/**
 * A decommission cancelled before its point of no return (its first clean-up step): the node back
 * in the provision state it was admitted from, one `node.decommission.cancelled`.
 */
async function cancelDecommission(
  tx: Tx,
  node: NodeRow,
  op: OperationRow,
  context: { actor: string; reason: string | null; operationId: string },
): Promise<void> {
  const admittedFrom = (op.result as { admittedFrom?: NodeRow['provisionState'] } | null)?.admittedFrom;
  await applyNodeChange(
    tx,
    node,
    {
      patch:
        node.provisionState === 'decommissioning' && admittedFrom ? { provisionState: admittedFrom } : {},
      event: { type: 'node.decommission.cancelled' },
    },
    context,
  );
}

/**
 * Whether a decommission may still be cancelled: none of its clean-up steps has begun (the first,
 * revoking the node's identity, is its point of no return). Past it, it runs to the end.
 */
export function decommissionCancellable(op: OperationRow): boolean {
  const done = (op.waitingFor as { stepsDone?: string[] } | null)?.stepsDone ?? [];
  return op.status === 'pending' || (op.status === 'running' && done.length === 0);
}
