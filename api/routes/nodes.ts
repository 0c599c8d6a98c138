import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { DrydockError } from '../../domain/errors';
import { idPattern } from '../../domain/ids';
import { ACCESS, LIVENESS, PROVISION_STATES } from '../../domain/node';
import { eventView, listNodeEvents } from '../../db/queries/events';
import { LABEL_KEY } from '../../domain/labels';
import { NODE_SORT, NODE_SORT_KEYS, nodeOrderOf } from '../../domain/node-order';
import { NODE_COUNTS, NODE_STATES, type NodeCountName } from '../../domain/node-state';
import { summarizeNodes } from '../../db/queries/node-summary';
import { getVisibleNode, listNodes, nodeViews, readNodeView, type NodeKey } from '../../db/queries/nodes';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, encodeCursor, page } from '../pagination';
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

const NODE_ID = idPattern('node').source.slice(1, -1);

/** The filters of a node list, and of its summary. */
const NODE_FILTERS = {
  id: z
    .string()
    .regex(new RegExp(`^${NODE_ID}(,${NODE_ID}){0,199}$`), 'is 1–200 node ids, separated by commas')
    .optional()
    .openapi({ description: 'the nodes with these ids (comma-separated, at most 200)' }),
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
};

const listNodesRoute = createRoute({
  method: 'get',
  path: '/v1/nodes',
  operationId: 'listNodes',
  tags: ['nodes'],
  summary: 'List nodes',
  request: {
    query: z.strictObject({
      ...NODE_FILTERS,
      includeDeleted: booleanString.optional(),
      sort: z
        .string()
        .regex(
          NODE_SORT,
          `is one of ${NODE_SORT_KEYS.join(', ')} or label:KEY, with a leading - for descending`,
        )
        .optional()
        .openapi({
          description:
            'the order (default: by id): hostname, poolId, provisionState, access, cordoned, maintenance, liveness, lastSeenAt, or label:KEY (its value; none first); a leading - for descending. Names sort as people read them (gpu-2 before gpu-10), ties by id',
        }),
      limit: limit(200, 50),
      cursor: cursor.optional().openapi({ description: "the page after: a page's nextCursor" }),
      before: cursor.optional().openapi({ description: "the page before: a page's prevCursor" }),
    }),
  },
  responses: {
    200: json(
      z.object({
        items: z.array(NodeSchema),
        nextCursor: z.string().nullable(),
        prevCursor: z
          .string()
          .nullable()
          .openapi({ description: 'the page before this one (as `before`); null on the first page' }),
      }),
      'a page of nodes',
    ),
    ...errorResponses,
  },
});

const NodeSummarySchema = z
  .object({
    total: z.number().openapi({ description: 'the nodes that match' }),
    counts: z
      .object(
        Object.fromEntries(NODE_COUNTS.map(({ name }) => [name, z.number()])) as Record<
          NodeCountName,
          z.ZodNumber
        >,
      )
      .openapi({
        description:
          'how many are in each state, each the length of the list its filter gives (alive: liveness=alive, draining: noScheduleReason=draining, pendingApproval: provisionState=pending, …); a node may count in several',
      }),
    groupBy: z.string(),
    labelKeys: z
      .array(z.string())
      .openapi({ description: 'every label key the nodes carry: what else to group by' }),
    groups: z
      .array(
        z.object({
          value: z
            .string()
            .nullable()
            .openapi({ description: "the label's value; null for the nodes without it (last)" }),
          nodes: z.array(
            z.object({
              id: z.string(),
              hostname: z.string(),
              poolId: z.string().nullable(),
              state: z.enum(NODE_STATES).openapi({
                description:
                  'its one state, the first that holds, worst first: lost, unreachable, offline, decommissioned, blocked, quarantined, maintenance, draining, cordoned, unhealthy (a NoSchedule reason), pending, schedulable',
              }),
            }),
          ),
        }),
      )
      .openapi({ description: 'groups and their nodes in the order people read names (b7 before b10)' }),
  })
  .openapi('NodeSummary');

const summarizeNodesRoute = createRoute({
  method: 'get',
  path: '/v1/node-summary',
  operationId: 'summarizeNodes',
  tags: ['nodes'],
  summary: 'Count nodes by state and group them by a label (the rack map), without reading each node',
  request: {
    query: z.strictObject({
      ...NODE_FILTERS,
      groupBy: z
        .string()
        .regex(LABEL_KEY, 'is a label key: up to 128 of letters, digits and . _ / -')
        .default('rack')
        .openapi({ description: 'the label whose values group the nodes (default rack)' }),
    }),
  },
  responses: { 200: json(NodeSummarySchema, 'the counts and groups'), ...errorResponses },
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
    const { cursor, before, limit, selector, sort, id, ...filter } = c.req.valid('query');
    if (cursor !== undefined && before !== undefined) {
      throw new DrydockError(
        'INVALID_INPUT',
        'give cursor (the page after) or before (the page before), not both',
      );
    }
    const key = nodeKeyOf(before ?? cursor, sort);
    if (filter.includeDeleted && principal.kind !== 'operator') {
      throw new DrydockError('FORBIDDEN', 'includeDeleted is for operator keys');
    }
    const { db } = c.get('deps');
    const rows = await listNodes(db, principal, {
      ...filter,
      ids: id?.split(','),
      selector: selector === undefined ? undefined : selectorOf(selector),
      order: sort === undefined ? undefined : nodeOrderOf(sort),
      from: key && { key, before: before !== undefined },
      limit: limit + 1,
    });
    // One row more than the page says whether there is more that way: after the page when reading
    // forward, before it (the first row, the list turned round) when reading back.
    const more = rows.length > limit;
    const items = before !== undefined && more ? rows.slice(1) : rows.slice(0, limit);
    const [first, last] = [items[0], items[items.length - 1]];
    const hasNext = before !== undefined ? last !== undefined : more;
    const hasPrev = before !== undefined ? more : key !== undefined && first !== undefined;
    return c.json(
      {
        items: await nodeViews(
          db,
          items.map((row) => row.node),
        ),
        nextCursor: hasNext && last ? nodeCursor(sort, last.key) : null,
        prevCursor: hasPrev && first ? nodeCursor(sort, first.key) : null,
      },
      200,
    );
  });

  router.openapi(summarizeNodesRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { selector, id, ...filter } = c.req.valid('query');
    const summary = await summarizeNodes(c.get('deps').db, principal, {
      ...filter,
      ids: id?.split(','),
      selector: selector === undefined ? undefined : selectorOf(selector),
    });
    return c.json(summary, 200);
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

/** A node list's cursor: in the default order the node's id (as ever), else the order, its value and the id. */
function nodeCursor(sort: string | undefined, key: NodeKey): string {
  return encodeCursor(sort === undefined ? key.id : JSON.stringify([sort, key.value, key.id]));
}

/** The key a node list's cursor holds, refused when this listing in this order did not hand it out. */
function nodeKeyOf(cursor: string | undefined, sort: string | undefined): NodeKey | undefined {
  if (cursor === undefined) return undefined;
  if (sort === undefined) {
    const id = decodeCursor(cursor, idPattern('node'))!;
    return { value: id, id };
  }
  const held = parsedJson(decodeCursor(cursor, /^\[.*\]$/s)!);
  if (
    !Array.isArray(held) ||
    held.length !== 3 ||
    held[0] !== sort ||
    typeof held[1] !== 'string' ||
    typeof held[2] !== 'string' ||
    !idPattern('node').test(held[2])
  ) {
    throw new DrydockError('INVALID_INPUT', `cursor is not one this listing handed out in the order ${sort}`);
  }
  return { value: held[1], id: held[2] };
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
