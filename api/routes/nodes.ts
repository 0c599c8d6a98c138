import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, asc, eq, gt, isNull, like, sql, type SQL } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { idPattern } from '../../domain/ids';
import { ACCESS, LIVENESS, PROVISION_STATES } from '../../domain/node';
import { eventView } from '../../db/events';
import { getVisibleNode, labelsOf, nodeView, visibleTo } from '../../db/nodes';
import { events, nodeLabels, nodes } from '../../db/schema';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  booleanString,
  cursor,
  errorResponses,
  EventSchema,
  json,
  limit,
  NodeSchema,
  nodeIdParams,
  slug,
} from '../schemas';

export const nodesRouter = new OpenAPIHono<AppEnv>();

const listQuery = z.object({
  tenantId: slug.optional(),
  poolId: slug.optional(),
  siteId: slug.optional(),
  cordoned: booleanString.optional(),
  provisionState: z.enum(PROVISION_STATES).optional(),
  access: z.enum(ACCESS).optional(),
  liveness: z.enum(LIVENESS).optional(),
  includeDeleted: booleanString.optional(),
  limit: limit(50, 50),
  cursor: cursor.optional(),
});

nodesRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/nodes',
    summary: 'List nodes',
    request: { query: listQuery },
    responses: {
      200: json(
        z.object({ items: z.array(NodeSchema), nextCursor: z.string().nullable() }),
        'a page of nodes',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const q = c.req.valid('query');
    const after = decodeCursor(q.cursor, idPattern('node'));
    if (q.includeDeleted && principal.kind !== 'operator') {
      throw new DrydockError('FORBIDDEN', 'includeDeleted is for operator keys');
    }
    const filters: (SQL | undefined)[] = [
      visibleTo(principal),
      q.includeDeleted ? undefined : isNull(nodes.deletedAt),
      q.tenantId ? eq(nodes.tenantId, q.tenantId) : undefined,
      q.poolId ? eq(nodes.poolId, q.poolId) : undefined,
      q.siteId ? eq(nodes.siteId, q.siteId) : undefined,
      q.cordoned === undefined ? undefined : eq(nodes.cordoned, q.cordoned),
      q.provisionState ? eq(nodes.provisionState, q.provisionState) : undefined,
      q.access ? eq(nodes.access, q.access) : undefined,
      q.liveness ? eq(nodes.liveness, q.liveness) : undefined,
      after ? gt(nodes.id, after) : undefined,
    ];
    const { db } = c.get('deps');
    const rows = await db
      .select()
      .from(nodes)
      .where(and(...filters))
      .orderBy(asc(nodes.id))
      .limit(q.limit + 1);
    const result = page(rows, q.limit, (n) => n.id);
    const labels = result.items.length
      ? await db
          .select()
          .from(nodeLabels)
          .where(sql`${nodeLabels.nodeId} in ${result.items.map((n) => n.id)}`)
          .orderBy(asc(nodeLabels.key))
      : [];
    return c.json(
      {
        items: result.items.map((n) =>
          nodeView(
            n,
            labels.filter((l) => l.nodeId === n.id),
          ),
        ),
        nextCursor: result.nextCursor,
      },
      200,
    );
  },
);

nodesRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/nodes/{id}',
    summary: 'Get a node with its labels, conditions and session',
    request: { params: nodeIdParams },
    responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, principal);
    return c.json(nodeView(node, await labelsOf(db, node.id)), 200);
  },
);

nodesRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/nodes/{id}/events',
    summary: "A node's events, oldest first",
    request: {
      params: nodeIdParams,
      query: z.object({
        type: z
          .string()
          .regex(/^[a-z][a-z0-9.-]{0,99}$/, 'type is an event type prefix such as node. or node.drained')
          .optional(),
        limit: limit(200, 200),
        cursor: cursor.optional(),
      }),
    },
    responses: {
      200: json(
        z.object({ items: z.array(EventSchema), nextCursor: z.string().nullable() }),
        'a page of events',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, principal);
    const q = c.req.valid('query');
    const after = decodeCursor(q.cursor, /^\d{1,18}$/);
    const rows = await db
      .select()
      .from(events)
      .where(
        and(
          eq(events.nodeId, node.id),
          q.type ? like(events.type, `${q.type}%`) : undefined,
          after ? gt(events.id, Number(after)) : undefined,
        ),
      )
      .orderBy(asc(events.id))
      .limit(q.limit + 1);
    const result = page(rows, q.limit, (e) => String(e.id));
    return c.json({ items: result.items.map(eventView), nextCursor: result.nextCursor }, 200);
  },
);
