import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Tx } from './client';
import { appendEvent } from './events';
import { isOpen } from './queries/allocations';
import { allocations } from './schema';

/** An allocation a forced release ended: its id and tenant. */
export interface ReleasedAllocation {
  id: string;
  tenantId: string;
}

/**
 * Releases every open allocation of the node by force, in the caller's transaction (the node locked
 * first, so no placement slips in): each is marked released by `by.actor`, with one
 * `allocation.force-released` on the node under the allocation's tenant. Used by a drain past its
 * deadline (`deadline` set) and by a purge that was told `force` or found the node holding work.
 * Run again, it finds nothing open and releases nothing twice.
 *
 * `askSources` (a drain): an observed allocation is not released here — its work still runs
 * wherever its scheduler put it. Its scheduler is asked to end it instead (`endRequestedAt`, one
 * `allocation.end-requested`, once), and its bridge releases it when the scheduler says it is gone.
 */
export async function forceReleaseOpenAllocations(
  tx: Tx,
  nodeId: string,
  by: { actor: string; operationId: string; deadline?: string },
  options: { askSources?: boolean } = {},
): Promise<ReleasedAllocation[]> {
  if (options.askSources) await askSourcesToEnd(tx, nodeId, by);
  const released = await tx
    .update(allocations)
    .set({ releasedAt: sql`now()`, releasedBy: by.actor })
    .where(
      and(
        eq(allocations.nodeId, nodeId),
        isOpen,
        options.askSources ? isNull(allocations.source) : undefined,
      ),
    )
    .returning({ id: allocations.id, tenantId: allocations.tenantId });
  released.sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const allocation of released) {
    await appendEvent(tx, {
      nodeId,
      tenantId: allocation.tenantId,
      type: 'allocation.force-released',
      actor: by.actor,
      operationId: by.operationId,
      data: {
        allocationId: allocation.id,
        tenantId: allocation.tenantId,
        operationId: by.operationId,
        ...(by.deadline ? { deadline: by.deadline } : {}),
      },
    });
  }
  return released;
}

/** Asks the schedulers of the node's open observed allocations to end them, each once. */
async function askSourcesToEnd(
  tx: Tx,
  nodeId: string,
  by: { actor: string; operationId: string; deadline?: string },
): Promise<void> {
  const asked = await tx
    .update(allocations)
    .set({ endRequestedAt: sql`now()` })
    .where(
      and(
        eq(allocations.nodeId, nodeId),
        isOpen,
        isNotNull(allocations.source),
        isNull(allocations.endRequestedAt),
      ),
    )
    .returning();
  asked.sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const allocation of asked) {
    await appendEvent(tx, {
      nodeId,
      tenantId: allocation.tenantId,
      type: 'allocation.end-requested',
      actor: by.actor,
      operationId: by.operationId,
      data: {
        allocationId: allocation.id,
        tenantId: allocation.tenantId,
        source: allocation.source!,
        externalId: allocation.externalId!,
        operationId: by.operationId,
        ...(by.deadline ? { deadline: by.deadline } : {}),
      },
    });
  }
}
