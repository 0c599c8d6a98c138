import { and, eq, isNull, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { isDraining } from '../../domain/node';
import type { AllocationKind } from '../../domain/operation';
import { placementRefusals } from '../../domain/placement';
import { actorOf, type Principal } from '../../domain/principal';
import { visibleTo } from '../../db/nodes';
import { appendEvent } from '../../db/events';
import { enqueueWake } from '../../db/outbox';
import { allocations, nodes } from '../../db/schema';
import type { AllocationRow } from '../../db/queries/allocations';
import { drainWorkflowId } from '../../workflows/definitions';
import type { AppDeps } from '../env';

export type { AllocationRow } from '../../db/queries/allocations';

/** A tenant key acts for its own tenant only. */
function requireTenant(principal: Principal, tenantId: string): void {
  if (principal.kind === 'tenant' && principal.tenantId !== tenantId) {
    throw new DrydockError('FORBIDDEN', `this key acts for tenant ${principal.tenantId}, not ${tenantId}`);
  }
}

/** Places an allocation on a node, in one transaction, if placement accepts it (`placementRefusals`). */
export async function placeAllocation(
  deps: Pick<AppDeps, 'db'>,
  principal: Principal,
  request: { nodeId: string; tenantId: string; kind: AllocationKind; endsAt: Date | null },
): Promise<AllocationRow> {
  const { nodeId, tenantId, kind, endsAt } = request;
  requireTenant(principal, tenantId);
  if (endsAt && endsAt.getTime() <= Date.now()) {
    throw new DrydockError('INVALID_INPUT', 'endsAt must be in the future');
  }
  return deps.db.transaction(async (tx) => {
    // FOR SHARE: a concurrent cordon or drain waits for this placement, or this one sees it.
    const [node] = await tx
      .select()
      .from(nodes)
      .where(and(eq(nodes.id, nodeId), visibleTo(principal)))
      .for('share');
    if (!node) throw new DrydockError('NOT_FOUND', `node ${nodeId} not found`, { nodeId });
    const reasons = placementRefusals(node, tenantId);
    if (reasons.length > 0) {
      throw new DrydockError('NOT_SCHEDULABLE', `node ${node.id} does not accept work for ${tenantId}`, {
        reasons,
      });
    }
    const [row] = await tx
      .insert(allocations)
      .values({ id: newId('alloc'), nodeId: node.id, tenantId, kind, endsAt })
      .returning();
    return row!;
  });
}

/**
 * Records work a scheduler already placed on a node (`source`, `externalId`), in one transaction:
 * the node locked FOR SHARE as a placement locks it, and the allocation recorded whatever
 * placement would say — the refusals it would have made (a cordoned node) go on its
 * `allocation.observed` event. The same work recorded again (live, same source and id) answers the
 * allocation it has, `created: false`; recorded live on another node, CONFLICT (its scheduler
 * moved it: release the old one first). A deleted node is NOT_FOUND, as it is to placement.
 */
export async function observeAllocation(
  deps: Pick<AppDeps, 'db'>,
  principal: Principal,
  request: {
    nodeId: string;
    tenantId: string;
    kind: AllocationKind;
    endsAt: Date | null;
    source: string;
    externalId: string;
  },
): Promise<{ allocation: AllocationRow; created: boolean }> {
  const { nodeId, tenantId, source, externalId } = request;
  requireTenant(principal, tenantId);
  return deps.db.transaction(async (tx) => {
    const [node] = await tx
      .select()
      .from(nodes)
      .where(and(eq(nodes.id, nodeId), visibleTo(principal), isNull(nodes.deletedAt)))
      .for('share');
    if (!node) throw new DrydockError('NOT_FOUND', `node ${nodeId} not found`, { nodeId });
    // Under the node's lock: the same work recorded at once by two calls takes turns on the index.
    const [inserted] = await tx
      .insert(allocations)
      .values({
        id: newId('alloc'),
        nodeId,
        tenantId,
        kind: request.kind,
        endsAt: request.endsAt,
        source,
        externalId,
      })
      .onConflictDoNothing({
        target: [allocations.source, allocations.externalId],
        where: sql`${allocations.releasedAt} is null and ${allocations.source} is not null`,
      })
      .returning();
    if (!inserted) {
      const [recorded] = await tx
        .select()
        .from(allocations)
        .where(
          and(
            eq(allocations.source, source),
            eq(allocations.externalId, externalId),
            isNull(allocations.releasedAt),
          ),
        );
      if (recorded && recorded.nodeId !== nodeId) {
        throw new DrydockError(
          'CONFLICT',
          `${source} ${externalId} is recorded live on node ${recorded.nodeId}: release allocation ${recorded.id} first`,
          { allocationId: recorded.id, nodeId: recorded.nodeId },
        );
      }
      if (recorded) {
        requireTenant(principal, recorded.tenantId);
        return { allocation: recorded, created: false };
      }
      throw new DrydockError(
        'CONFLICT',
        `${source} ${externalId} was recorded and released meanwhile: send it again`,
      );
    }
    await appendEvent(tx, {
      nodeId,
      tenantId,
      type: 'allocation.observed',
      actor: actorOf(principal),
      data: {
        allocationId: inserted.id,
        tenantId,
        source,
        externalId,
        refusals: placementRefusals(node, tenantId),
      },
    });
    return { allocation: inserted, created: true };
  });
}

/**
 * Releases an allocation, in one transaction; a release of a released one answers it as it is.
 * `observedOnly` (a key holding compute:allocations:observe, not …:write): observed ones only.
 * A drain waiting on the node is woken through the outbox, in the same transaction: the node row is
 * locked FOR SHARE before the allocation's row (node first, as a drain's look locks them), so a
 * drain that began before is woken, and one that begins meanwhile waits for this commit and then
 * sees the release on its first look.
 */
export async function releaseAllocation(
  deps: Pick<AppDeps, 'db'>,
  principal: Principal,
  id: string,
  observedOnly = false,
): Promise<AllocationRow> {
  return deps.db.transaction(async (tx) => {
    const [found] = await tx
      .select({ allocation: allocations, noScheduleReasons: nodes.noScheduleReasons })
      .from(allocations)
      .innerJoin(nodes, eq(nodes.id, allocations.nodeId))
      .where(and(eq(allocations.id, id), visibleTo(principal)))
      .for('share', { of: nodes });
    if (!found) throw new DrydockError('NOT_FOUND', `allocation ${id} not found`, { allocationId: id });
    requireTenant(principal, found.allocation.tenantId);
    if (observedOnly && found.allocation.source === null) {
      throw new DrydockError(
        'FORBIDDEN',
        'this key lacks compute:allocations:write: with compute:allocations:observe it releases observed allocations only',
        { action: 'compute:allocations:write' },
      );
    }
    if (found.allocation.releasedAt !== null) return found.allocation;
    const [released] = await tx
      .update(allocations)
      .set({ releasedAt: sql`now()`, releasedBy: actorOf(principal) })
      .where(and(eq(allocations.id, id), isNull(allocations.releasedAt)))
      .returning();
    if (isDraining(found))
      await enqueueWake(tx, drainWorkflowId(found.allocation.nodeId), `allocation ${id} released`);
    return released ?? found.allocation;
  });
}
