import { and, desc, eq, inArray } from 'drizzle-orm';
import { assertControllable, startDrain } from '../../domain/controls';
import { isDraining } from '../../domain/node';
import { endCancelledOperation } from '../cancellation';
import type { Tx } from '../client';
import { applyNodeChange, checkVersion, type NodeRow } from '../nodes';
import { findOperation, type OperationRow } from '../operations';
import { enqueueWake } from '../outbox';
import { liveAllocation } from '../queries/allocations';
import { events } from '../schema';
import { requestOperation, type OperationRequest, type Requested } from './record';

/** A drain's request: `deadline` (an absolute time, resolved by the API) is when what is live goes by force. */
export interface DrainRequest extends OperationRequest {
  deadline: string | null;
}

/**
 * The drain fence, in the caller's transaction: cordon, `draining`, the operation `pending` with
 * its deadline, `node.draining` naming it, the workflow's start in the outbox. A node still drained
 * by an earlier drain answers that drain; a drain already running is joined.
 */
export function requestDrain(tx: Tx, nodeId: string, request: DrainRequest): Promise<Requested> {
  return requestOperation(tx, nodeId, request, {
    kind: 'drain',
    open: {
      // The node left `draining` (an uncordon) while the drain's record stayed open: that drain is
      // over; it ends here, and its workflow is told so it closes before the new one starts.
      staleWhen: (node) => !isDraining(node),
      end: async (tx, open) => {
        await endCancelledOperation(tx, open.id, { actor: request.actor });
        await enqueueWake(tx, open.workflowId, 'superseded by a new drain');
      },
    },
    async admit(tx, node) {
      assertControllable(node);
      const drainedBy = await drainThatDrained(tx, node);
      if (drainedBy) return drainedBy;
      checkVersion(node, request.version);
    },
    record: () => ({ deadline: request.deadline ? new Date(request.deadline) : null }),
    async apply(tx, node, operation) {
      const change = startDrain(node, request.deadline);
      const context = { actor: request.actor, reason: request.reason, operationId: operation.id };
      return { node: await applyNodeChange(tx, node, change, context) };
    },
  });
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
  return (await liveAllocation(tx, node.id)) ? undefined : drain;
}
