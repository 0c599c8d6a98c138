import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { isDraining } from '../../domain/node';
import { answerTurned, endingRefusal, type EndingAction } from '../../domain/observed';
import type { AllocationKind } from '../../domain/operation';
import { placementRefusals } from '../../domain/placement';
import { actorOf, type Principal } from '../../domain/principal';
import { visibleTo } from '../../db/nodes';
import { appendEvent } from '../../db/events';
import { enqueueWake } from '../../db/outbox';
import { allocations, events, nodes } from '../../db/schema';
import type { Tx } from '../../db/client';
import { isOpen, type AllocationRow } from '../../db/queries/allocations';
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
    // A drain waits for it from now on: its look lists it, and past its deadline asks for its end.
    if (isDraining(node))
      await enqueueWake(tx, drainWorkflowId(nodeId), `allocation ${inserted.id} observed`);
    return { allocation: inserted, created: true };
  });
}

/**
 * The allocation as the principal may act on it, with its node's NoSchedule reasons: the node row
 * locked FOR SHARE before the allocation's row is touched (node first, as a drain's look locks
 * them), so a drain that began before is woken by what the caller writes, and one that begins
 * meanwhile waits for its commit. NOT_FOUND when the principal cannot see it; FORBIDDEN when it is
 * another tenant's.
 */
async function allocationOnLockedNode(tx: Tx, principal: Principal, id: string) {
  const [found] = await tx
    .select({ allocation: allocations, noScheduleReasons: nodes.noScheduleReasons })
    .from(allocations)
    .innerJoin(nodes, eq(nodes.id, allocations.nodeId))
    .where(and(eq(allocations.id, id), visibleTo(principal)))
    .for('share', { of: nodes });
  if (!found) throw new DrydockError('NOT_FOUND', `allocation ${id} not found`, { allocationId: id });
  requireTenant(principal, found.allocation.tenantId);
  return found;
}

/**
 * Releases an allocation, in one transaction; a release of a released one answers it as it is.
 * `observedOnly` (a key holding compute:allocations:observe, not …:write): observed ones only.
 * A drain waiting on the node is woken through the outbox, in the same transaction
 * (`allocationOnLockedNode`).
 */
export async function releaseAllocation(
  deps: Pick<AppDeps, 'db'>,
  principal: Principal,
  id: string,
  observedOnly = false,
): Promise<AllocationRow> {
  return deps.db.transaction(async (tx) => {
    const found = await allocationOnLockedNode(tx, principal, id);
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
    if (released?.endRequestedAt) await recordForcedEnd(tx, principal, released);
    if (isDraining(found))
      await enqueueWake(tx, drainWorkflowId(found.allocation.nodeId), `allocation ${id} released`);
    return released ?? found.allocation;
  });
}

/**
 * Observed work a drain's deadline asked its scheduler to end, released by its bridge once the
 * scheduler ended it: a forced release of that drain, recorded as one (`allocation.force-released`,
 * with the drain and deadline its `allocation.end-requested` named).
 */
async function recordForcedEnd(tx: Tx, principal: Principal, allocation: AllocationRow): Promise<void> {
  const [asked] = await tx
    .select({ operationId: events.operationId, data: events.data })
    .from(events)
    .where(
      and(
        eq(events.nodeId, allocation.nodeId),
        eq(events.type, 'allocation.end-requested'),
        sql`${events.data}->>'allocationId' = ${allocation.id}`,
      ),
    )
    .orderBy(desc(events.id))
    .limit(1);
  if (!asked?.operationId) return;
  const deadline = asked.data.deadline;
  await appendEvent(tx, {
    nodeId: allocation.nodeId,
    tenantId: allocation.tenantId,
    type: 'allocation.force-released',
    actor: actorOf(principal),
    operationId: asked.operationId,
    data: {
      allocationId: allocation.id,
      tenantId: allocation.tenantId,
      operationId: asked.operationId,
      ...(typeof deadline === 'string' ? { deadline } : {}),
    },
  });
}

/**
 * Records what a scheduler answered when asked to end observed work — on a draining node (a
 * scheduler that evicts asks politely from the drain's start) or once a drain's deadline asked
 * (`endRequestedAt`) — in one transaction: the action and the answer on the allocation,
 * `allocation.ending`, and the node's drain woken when the answer turned (`answerTurned`: now
 * refused, or now accepted), so its progress shows it. The same answer again moves only `endingAt`
 * (when the scheduler last said it), with no event. INVALID_STATE, naming why, for work placed
 * through Drydock, work released or ended, or work neither on a draining node nor asked to end
 * (`endingRefusal`).
 */
export async function recordEnding(
  deps: Pick<AppDeps, 'db'>,
  principal: Principal,
  id: string,
  ending: { action: EndingAction; answer: string },
): Promise<{ allocation: AllocationRow; live: boolean }> {
  return deps.db.transaction(async (tx) => {
    const found = await allocationOnLockedNode(tx, principal, id);
    // The allocation's row is locked too: two answers at once take turns, and one writes.
    const [current] = await tx
      .select({ allocation: allocations, live: sql<boolean>`(${isOpen})` })
      .from(allocations)
      .where(eq(allocations.id, id))
      .for('update');
    const { allocation, live } = current!;
    const draining = isDraining(found);
    const refusal = endingRefusal({ ...allocation, live, draining });
    if (refusal) {
      throw new DrydockError('INVALID_STATE', refusal, {
        allocationId: id,
        source: allocation.source,
        endRequestedAt: allocation.endRequestedAt?.toISOString() ?? null,
        releasedAt: allocation.releasedAt?.toISOString() ?? null,
        draining,
      });
    }
    if (allocation.endAction === ending.action && allocation.endAnswer === ending.answer) {
      const [again] = await tx
        .update(allocations)
        .set({ endingAt: sql`now()` })
        .where(eq(allocations.id, id))
        .returning();
      return { allocation: again!, live };
    }
    const [updated] = await tx
      .update(allocations)
      .set({ endAction: ending.action, endAnswer: ending.answer, endingAt: sql`now()` })
      .where(eq(allocations.id, id))
      .returning();
    await appendEvent(tx, {
      nodeId: allocation.nodeId,
      tenantId: allocation.tenantId,
      type: 'allocation.ending',
      actor: actorOf(principal),
      data: {
        allocationId: id,
        tenantId: allocation.tenantId,
        source: allocation.source!,
        externalId: allocation.externalId!,
        action: ending.action,
        answer: ending.answer,
      },
    });
    if (draining && answerTurned(allocation.endAnswer, ending.answer)) {
      await enqueueWake(tx, drainWorkflowId(allocation.nodeId), `allocation ${id} ending: ${ending.action}`);
    }
    return { allocation: updated!, live };
  });
}
