import { inArray } from 'drizzle-orm';
import {
  POOL_DRAIN_TIMELINE,
  extendTimeline,
  type NodeDrainSeen,
  type PoolDrainNodeTimeline,
} from '../domain/pool-drain-timeline';
import type { PoolDrainWaitingFor } from '../domain/progress';
import type { DbOrTx } from '../db/client';
import type { OperationRow } from '../db/operations';
import { nodes } from '../db/schema';

/** What a node drain's record says of its node, for the pool drain's timeline. */
export type DrainSeen = Omit<NodeDrainSeen, 'nodeId' | 'hostname'>;

/**
 * The pool drain's timeline after this look: the first `POOL_DRAIN_TIMELINE` nodes of its
 * selection, each row its last look's extended by what its drain's record says now (a node no
 * drain reached yet still waits for its turn), with its hostname.
 */
export async function timelineOf(
  tx: DbOrTx,
  op: OperationRow,
  nodeIds: string[],
  seen: Map<string, DrainSeen>,
): Promise<PoolDrainNodeTimeline[]> {
  const followed = nodeIds.slice(0, POOL_DRAIN_TIMELINE);
  if (followed.length === 0) return [];
  const named = await tx
    .select({ id: nodes.id, hostname: nodes.hostname })
    .from(nodes)
    .where(inArray(nodes.id, followed));
  const hostnames = new Map(named.map((node) => [node.id, node.hostname]));
  // A record written before the timeline was kept has none: its rows begin at this look.
  const earlier = new Map(
    ((op.waitingFor as PoolDrainWaitingFor | null)?.timeline ?? []).map((row) => [row.nodeId, row]),
  );
  const startedAt = (op.startedAt ?? op.createdAt).toISOString();
  const now = new Date().toISOString();
  const notReached: DrainSeen = {
    operationId: null,
    requestedAt: null,
    deadline: null,
    endedAt: null,
    now: 'waiting',
  };
  return followed.map((nodeId) =>
    extendTimeline(
      earlier.get(nodeId),
      { nodeId, hostname: hostnames.get(nodeId) ?? nodeId, ...(seen.get(nodeId) ?? notReached) },
      startedAt,
      now,
    ),
  );
}
