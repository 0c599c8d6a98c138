import { eq, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { moveTarget } from '../../domain/provision';
import { lockArtifactsOf } from '../artifacts';
import type { Tx } from '../client';
import type { NodeRow } from '../nodes';
import { previewOf } from '../queries/decommission';
import { nodes } from '../schema';
import { requestOperation, type OperationRequest, type Requested } from './record';

/** What execute presents: the preview's generation and digest, a confirmation, and who runs it. */
export interface DecommissionRequest extends OperationRequest {
  confirm: string;
  nodeGeneration: number;
  dependencyDigest: string;
  operator: string;
}

/**
 * Admission, in the caller's transaction: recompute generation, digest and blockers; refuse on any
 * difference (CONFLICT) or blocker (INVALID_STATE); else `decommissioning` (out of placement at
 * once), the operation `pending` (it remembers the state it was admitted from: a cancel before
 * the point of no return puts it back) and its workflow's start in the outbox.
 */
export function requestDecommission(
  tx: Tx,
  nodeId: string,
  request: DecommissionRequest,
): Promise<Requested> {
  let admittedFrom: NodeRow['provisionState'] | null = null;
  return requestOperation(tx, nodeId, request, {
    kind: 'decommission',
    // Another execute meets admission, and the admitted node (its version moved on) matches no preview.
    open: false,
    async admit(tx, node) {
      // Its sole-copy blockers count other nodes' copies: no change of those may be in flight.
      await lockArtifactsOf(tx, node.id);
      refuseUnlessPreviewed(node, await previewOf(tx, node), request);
      admittedFrom = node.provisionState;
    },
    record: () => ({
      result: {
        operator: request.operator,
        nodeGeneration: request.nodeGeneration,
        dependencyDigest: request.dependencyDigest,
        admittedFrom,
      },
      waitingFor: { step: null, stepsDone: [] },
    }),
    async apply(tx, node) {
      // Admission is recorded by the operation; the audit event is the one `node.decommissioned`.
      const [admitted] = await tx
        .update(nodes)
        .set({ provisionState: moveTarget('decommission'), version: node.version + 1, updatedAt: sql`now()` })
        .where(eq(nodes.id, node.id))
        .returning();
      return { node: admitted! };
    },
  });
}

/** Admission's refusals: a confirmation not in the preview, a preview out of date, blockers left. */
function refuseUnlessPreviewed(
  node: NodeRow,
  preview: Awaited<ReturnType<typeof previewOf>>,
  request: DecommissionRequest,
): void {
  if (!preview.confirmationIdentities.includes(request.confirm)) {
    throw new DrydockError(
      'INVALID_INPUT',
      `confirm must be exactly one of: ${preview.confirmationIdentities.join(', ')}`,
      { confirmationIdentities: preview.confirmationIdentities },
    );
  }
  if (
    request.nodeGeneration !== preview.nodeGeneration ||
    request.dependencyDigest !== preview.dependencyDigest
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
