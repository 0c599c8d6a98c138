import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { isDraining } from '../../domain/node';
import { ALLOCATION_KINDS } from '../../domain/operation';
import { placementRefusals } from '../../domain/placement';
import { actorOf, type Principal } from '../../domain/principal';
import { allocations, nodes } from '../../db/schema';
import { visibleTo } from '../../db/nodes';
import { allocationReleasedSignal, drainWorkflowId } from '../../workflows/definitions';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, idOf, json, jsonBody, slug } from '../schemas';
import { signalIfRunning } from '../workflows';

export const allocationsRouter = new OpenAPIHono<AppEnv>();

const AllocationSchema = z
  .object({
    id: z.string(),
    nodeId: z.string(),
    tenantId: z.string(),
    kind: z.enum(ALLOCATION_KINDS),
    createdAt: z.string(),
    endsAt: z.string().nullable(),
    releasedAt: z.string().nullable(),
  })
  .openapi('Allocation');

function allocationView(a: typeof allocations.$inferSelect) {
  return {
    id: a.id,
    nodeId: a.nodeId,
    tenantId: a.tenantId,
    kind: a.kind,
    createdAt: a.createdAt.toISOString(),
    endsAt: a.endsAt?.toISOString() ?? null,
    releasedAt: a.releasedAt?.toISOString() ?? null,
  };
}

/** A tenant key acts for its own tenant only. */
function requireTenant(principal: Principal, tenantId: string): void {
  if (principal.kind === 'tenant' && principal.tenantId !== tenantId) {
    throw new DrydockError('FORBIDDEN', `this key acts for tenant ${principal.tenantId}, not ${tenantId}`);
  }
}

allocationsRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/allocations',
    summary: 'Place an allocation on a node (refused unless placement accepts it)',
    request: jsonBody(
      z.strictObject({
        nodeId: idOf('node'),
        tenantId: slug,
        kind: z.enum(ALLOCATION_KINDS),
        endsAt: z.iso.datetime({ offset: true }).optional(),
      }),
      true,
    ),
    responses: { 201: json(AllocationSchema, 'the allocation'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:allocations:write');
    const body = c.req.valid('json');
    requireTenant(principal, body.tenantId);
    const endsAt = body.endsAt ? new Date(body.endsAt) : null;
    if (endsAt && endsAt.getTime() <= Date.now()) {
      throw new DrydockError('INVALID_INPUT', 'endsAt must be in the future');
    }
    const created = await c.get('deps').db.transaction(async (tx) => {
      // FOR SHARE: a concurrent cordon or drain waits for this placement, or this one sees it.
      const [node] = await tx
        .select()
        .from(nodes)
        .where(and(eq(nodes.id, body.nodeId), visibleTo(principal)))
        .for('share');
      if (!node)
        throw new DrydockError('NOT_FOUND', `node ${body.nodeId} not found`, { nodeId: body.nodeId });
      const reasons = placementRefusals(node, body.tenantId);
      if (reasons.length > 0) {
        throw new DrydockError(
          'NOT_SCHEDULABLE',
          `node ${node.id} does not accept work for ${body.tenantId}`,
          {
            reasons,
          },
        );
      }
      const [row] = await tx
        .insert(allocations)
        .values({ id: newId('alloc'), nodeId: node.id, tenantId: body.tenantId, kind: body.kind, endsAt })
        .returning();
      return row!;
    });
    return c.json(allocationView(created), 201);
  },
);

allocationsRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/allocations/{id}/release',
    summary: 'Release an allocation; a drain waiting on its node wakes at once',
    request: { params: z.object({ id: idOf('alloc') }) },
    responses: { 200: json(AllocationSchema, 'the released allocation'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:allocations:write');
    const { db, temporal } = c.get('deps');
    const id = c.req.valid('param').id;
    const [found] = await db
      .select({ allocation: allocations, node: nodes })
      .from(allocations)
      .innerJoin(nodes, eq(nodes.id, allocations.nodeId))
      .where(and(eq(allocations.id, id), visibleTo(principal)));
    if (!found) throw new DrydockError('NOT_FOUND', `allocation ${id} not found`, { allocationId: id });
    requireTenant(principal, found.allocation.tenantId);
    const [released] = await db
      .update(allocations)
      .set({ releasedAt: sql`now()`, releasedBy: actorOf(principal) })
      .where(and(eq(allocations.id, id), isNull(allocations.releasedAt)))
      .returning();
    // Read the node after the release committed: a drain that began before this read is signalled,
    // and one that begins after it sees the release on its first check.
    const [node] = released
      ? await db
          .select({ noScheduleReasons: nodes.noScheduleReasons })
          .from(nodes)
          .where(eq(nodes.id, found.node.id))
      : [];
    if (node && isDraining(node)) {
      await signalIfRunning(temporal, drainWorkflowId(found.node.id), allocationReleasedSignal.name, [
        { allocationId: id },
      ]);
    }
    return c.json(allocationView(released ?? found.allocation), 200);
  },
);
