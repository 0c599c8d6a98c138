import { and, eq, getTableColumns, isNull, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { isDraining } from '../../domain/node';
import type { AllocationKind } from '../../domain/operation';
import { placementRefusals } from '../../domain/placement';
import { actorOf, type Principal } from '../../domain/principal';
import { visibleTo } from '../../db/nodes';
import { withPreparedStatements } from '../../db/prepared';
import { allocations, nodes } from '../../db/schema';
import type { AllocationRow } from '../../db/queries/allocations';
import { allocationReleasedSignal, drainWorkflowId } from '../../workflows/definitions';
import type { AppDeps } from '../env';
import { signalIfRunning } from '../workflows';

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
 * Releases an allocation, in one statement; a release of a released one answers it as it is.
 * A drain waiting on the node is signalled at once: the node row is locked FOR SHARE before the
 * allocation's row (node first, as a drain's forced release locks them), so a drain that began
 * before is seen here (a locked row reads as last committed), and one that begins meanwhile waits
 * for this commit and then sees the release on its first check. One round trip instead of a
 * transaction of five: a release is most of what a drain's reaction waits on (bench: drain-reaction).
 */
export async function releaseAllocation(
  deps: Pick<AppDeps, 'db' | 'temporal' | 'log'>,
  principal: Principal,
  id: string,
): Promise<AllocationRow> {
  // Prepared: one round trip instead of two (db/prepared.ts); the statement looks up by key.
  const db = withPreparedStatements(deps.db);
  const found = db.$with('found').as(
    db
      .select({ ...getTableColumns(allocations), noScheduleReasons: nodes.noScheduleReasons })
      .from(allocations)
      .innerJoin(nodes, eq(nodes.id, allocations.nodeId))
      .where(and(eq(allocations.id, id), visibleTo(principal)))
      .for('share', { of: nodes }),
  );
  // Only an allocation the caller may release: a tenant key's own tenant's (else FORBIDDEN below).
  const releasable = principal.kind === 'tenant' ? eq(found.tenantId, principal.tenantId) : sql`true`;
  const released = db.$with('released').as(
    db
      .update(allocations)
      .set({ releasedAt: sql`now()`, releasedBy: actorOf(principal) })
      .where(
        and(
          eq(allocations.id, id),
          isNull(allocations.releasedAt),
          sql`exists (select 1 from ${found} where ${releasable})`,
        ),
      )
      .returning({ releasedAt: allocations.releasedAt, releasedBy: allocations.releasedBy }),
  );
  const [row] = await db
    .with(found, released)
    .select({
      allocation: Object.fromEntries(
        Object.keys(getTableColumns(allocations)).map((key) => [key, found[key as keyof AllocationRow]]),
      ) as { [K in keyof AllocationRow]: (typeof found)[K] },
      noScheduleReasons: found.noScheduleReasons,
      releasedAt: released.releasedAt,
      releasedBy: released.releasedBy,
    })
    .from(found)
    .leftJoin(released, sql`true`);
  if (!row) throw new DrydockError('NOT_FOUND', `allocation ${id} not found`, { allocationId: id });
  requireTenant(principal, row.allocation.tenantId);
  const { releasedAt, releasedBy } = row;
  // Released before: answered as it is, and a drain is told again — the first release's signal may
  // be lost with its process (killed between the commit and the signal; the client retries).
  const allocation = releasedAt === null ? row.allocation : { ...row.allocation, releasedAt, releasedBy };
  if (allocation.releasedAt !== null && isDraining(row)) {
    await signalIfRunning(deps, drainWorkflowId(allocation.nodeId), allocationReleasedSignal.name, [
      { allocationId: id },
    ]);
  }
  return allocation;
}
