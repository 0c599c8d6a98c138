import { and, eq, inArray, sql } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES } from '../domain/command-status';
import { finishDrain } from '../domain/controls';
import { isDraining } from '../domain/node';
import { isFinished, type CancellationRequest } from '../domain/operation';
import type { AttemptRecord } from '../domain/remediation';
import type { Tx } from './client';
import { stopWaiting } from './disruptions';
import { appendEvent } from './events';
import { applyNodeChange, lockNode, type NodeRow } from './nodes';
import { finishOperation, openOperation, type OperationRow } from './operations';
import { forgetPurgedNode } from './purge';
import { escalateRemediation, remediationAttempts } from './remediation';
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
 * operation `cancelled`, one event, the actor being whoever the recorded request names (or `actor`).
 * Idempotent: an operation already finished is left as it is. Every door that cancels comes here —
 * the workflow's clean-up (DELETE, the Temporal UI), DELETE of an operation whose workflow is gone,
 * and a purge that supersedes a drain.
 *
 * - drain: `draining` comes off (the node stays cordoned: an operator uncordons it), its waiting
 *   place in the pool's disruption budget is given up, `node.drain.cancelled`.
 * - purge: the unanswered purge command is withdrawn and the node stays `purging` (out of placement;
 *   purge again, or DELETE it), `node.purge.cancelled`. A purge the node already acknowledged is
 *   past cancelling: the node is forgotten as on any ack and the purge `succeeded`.
 * - remediation: escalated, as any remediation that ends unhealed — maintenance on,
 *   `node.remediation.escalated` (the attempts: the workflow's, or as its commands record them).
 * - pool drain: no node of its own; its workflow sees to its node drains (`cancellation.children`).
 * - decommission: never cancelled (its steps run to the end); here only for completeness of kinds.
 */
export async function endCancelledOperation(
  tx: Tx,
  operationId: string,
  options: { actor: string; attempts?: AttemptRecord[] },
): Promise<OperationRow | undefined> {
  const [peek] = await tx.select().from(operations).where(eq(operations.id, operationId));
  if (!peek) return undefined;
  // The node first, then the operation: the order every lifecycle step locks in.
  const node = peek.nodeId ? await lockNode(tx, peek.nodeId) : null;
  const [op] = await tx.select().from(operations).where(eq(operations.id, operationId)).for('update');
  if (!op || isFinished(op.status)) return op;
  const actor = op.cancellation?.by ?? options.actor;
  const context = { actor, reason: op.cancellation?.reason ?? null, operationId: op.id };
  const cancelled = () => finishOperation(tx, op.id, 'cancelled');

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
    case 'pool-drain':
      return cancelled();
  }
}

/**
 * Cancels the node's open drain, if any, in the caller's transaction (the node locked): the request
 * recorded (`by`, `reason`) and the drain's clean-up run (`endCancelledOperation`). An uncordon
 * ends a drain this way, and so does a purge that begins on a draining node (superseded); the
 * caller signals the drain workflow so it ends at once.
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
