import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { DrydockError } from '../../domain/errors';
import { idPattern } from '../../domain/ids';
import { ACCESS, LIVENESS, PROVISION_STATES } from '../../domain/node';
import { eventView, listNodeEvents } from '../../db/queries/events';
import { getVisibleNode, listNodes, nodeViews, readNodeView } from '../../db/queries/nodes';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  booleanString,
  cursor,
  errorResponses,
  EventSchema,
  eventTypePrefixes,
  json,
  labelSelector,
  limit,
  selectorOf,
  NodeSchema,
  nodeIdParams,
  slug,
} from '../schemas';

const listNodesRoute = createRoute({
  method: 'get',
  path: '/v1/nodes',
  operationId: 'listNodes',
  tags: ['nodes'],
  summary: 'List nodes',
  request: {
    query: z.strictObject({
      tenantId: slug.optional(),
      poolId: slug.optional(),
      siteId: slug.optional(),
      cordoned: booleanString.optional(),
      maintenance: booleanString.optional(),
      noScheduleReason: z
        .string()
        .regex(/^[A-Za-z0-9._:=/-]{1,128}$/, 'is 1–128 of letters, digits and . _ : = / -')
        .optional()
        .openapi({ description: 'nodes with this NoSchedule reason: draining, quarantined, …' }),
      provisionState: z.enum(PROVISION_STATES).optional(),
      access: z.enum(ACCESS).optional(),
      liveness: z.enum(LIVENESS).optional(),
      selector: labelSelector.optional(),
      hostname: z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,253}$/, 'is 1–253 of letters, digits and . _ -')
        .optional()
        .openapi({ description: 'nodes whose hostname contains this, in any case' }),
      includeDeleted: booleanString.optional(),
      limit: limit(200, 50),
      cursor: cursor.optional(),
    }),
  },
  responses: {
    200: json(z.object({ items: z.array(NodeSchema), nextCursor: z.string().nullable() }), 'a page of nodes'),
    ...errorResponses,
  },
});

const getNodeRoute = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}',
  operationId: 'getNode',
  tags: ['nodes'],
  summary: 'Get a node with its labels, conditions, session and what its schedulers say of it',
  request: { params: nodeIdParams },
  responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
});

const nodeEventsRoute = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/events',
  operationId: 'listNodeEvents',
  tags: ['events'],
  summary: "A node's events, oldest first (or newest first)",
  request: {
    params: nodeIdParams,
    query: z.strictObject({
      type: eventTypePrefixes.optional(),
      order: z
        .enum(['oldest', 'newest'])
        .default('oldest')
        .openapi({ description: 'oldest first (the default) or newest first; a cursor keeps its order' }),
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
});

/** Reading nodes and their events. */
export function nodesRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(listNodesRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { cursor, limit, selector, ...filter } = c.req.valid('query');
    const after = decodeCursor(cursor, idPattern('node'));
    if (filter.includeDeleted && principal.kind !== 'operator') {
      throw new DrydockError('FORBIDDEN', 'includeDeleted is for operator keys');
    }
    const { db } = c.get('deps');
    const rows = await listNodes(db, principal, {
      ...filter,
      selector: selector === undefined ? undefined : selectorOf(selector),
      after,
      limit: limit + 1,
    });
    const result = page(rows, limit, (n) => n.id);
    return c.json({ items: await nodeViews(db, result.items), nextCursor: result.nextCursor }, 200);
  });

  router.openapi(getNodeRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, principal);
    return c.json(await readNodeView(db, node), 200);
  });

  router.openapi(nodeEventsRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, principal);
    const q = c.req.valid('query');
    const after = decodeCursor(q.cursor, /^\d{1,18}$/);
    const rows = await listNodeEvents(db, principal, node.id, {
      typePrefixes: q.type,
      afterId: after ? Number(after) : undefined,
      limit: q.limit + 1,
      newestFirst: q.order === 'newest',
    });
    const result = page(rows, q.limit, (e) => String(e.id));
    return c.json({ items: result.items.map(eventView), nextCursor: result.nextCursor }, 200);
  });

  return router;
}
