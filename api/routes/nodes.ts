import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, asc, eq, gt, isNull, like, sql, type SQL } from 'drizzle-orm';
import { cordon, uncordon, type Control } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import { idPattern } from '../../domain/ids';
import { ACCESS, LIVENESS, PROVISION_STATES } from '../../domain/node';
import type { Action } from '../../domain/principal';
import { actorOf } from '../../domain/principal';
import { eventView } from '../../db/events';
import { changeNode, getVisibleNode, labelsOf, nodeView, visibleTo } from '../../db/nodes';
import { findOperationByKey, operationView } from '../../db/operations';
import { events, nodeLabels, nodes } from '../../db/schema';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  booleanString,
  errorResponses,
  EventSchema,
  expectedVersion,
  idempotencyHeaders,
  ifMatchHeaders,
  json,
  jsonBody,
  limit,
  mutationBody,
  NodeSchema,
  nodeIdParams,
  OperationSchema,
  reason,
  slug,
  version,
} from '../schemas';
import { drainWorkflowId } from '../../workflows/definitions';
import { LifecycleOperationKey, NodeIdKey, PoolIdKey, TenantIdKey } from '../../workflows/search-attributes';
import { requestHash, signalIfRunning, startOperation } from '../workflows';

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
  cursor: z.string().max(200).optional(),
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
        cursor: z.string().max(200).optional(),
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

/** A plain control route: one transaction, the node back (unchanged when nothing moved). */
function controlRoute(path: string, summary: string, action: Action, control: Control) {
  nodesRouter.openapi(
    createRoute({
      method: 'post',
      path,
      summary,
      request: { params: nodeIdParams, headers: ifMatchHeaders, ...jsonBody(mutationBody) },
      responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
    }),
    async (c) => {
      const principal = c.get('principal');
      requireAction(principal, action);
      const body = c.req.valid('json');
      const { db, temporal } = c.get('deps');
      const { before, after, view } = await changeNode(db, {
        nodeId: c.req.valid('param').id,
        principal,
        version: expectedVersion(body.version, c.req.valid('header')['if-match']),
        control,
        reason: body.reason,
      });
      if (before.noScheduleReasons.includes('draining') && !after.noScheduleReasons.includes('draining')) {
        await signalIfRunning(temporal, drainWorkflowId(after.id), 'cancel');
      }
      return c.json(view, 200);
    },
  );
}

controlRoute('/v1/nodes/{id}/cordon', 'Cordon a node: no new placement', 'compute:nodes:cordon', cordon);
controlRoute(
  '/v1/nodes/{id}/uncordon',
  'Uncordon a node; ends a drain in progress',
  'compute:nodes:cordon',
  uncordon,
);

const drainBody = z.strictObject({ reason: reason.optional(), version: version.optional() });

nodesRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/drain',
    summary: 'Cordon a node and wait for it to empty (workflow drain/<nodeId>)',
    request: { params: nodeIdParams, headers: idempotencyHeaders, ...jsonBody(drainBody) },
    responses: {
      202: json(z.object({ node: NodeSchema, operation: OperationSchema }), 'the drain began'),
      200: json(z.object({ node: NodeSchema, operation: OperationSchema }), 'the drain already runs'),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:drain');
    const deps = c.get('deps');
    const nodeId = c.req.valid('param').id;
    const headers = c.req.valid('header');
    const body = c.req.valid('json');
    const version = expectedVersion(body.version, headers['if-match']);
    const node = await getVisibleNode(deps.db, nodeId, principal);
    const idempotencyKey = headers['idempotency-key'] ?? null;
    const hash = idempotencyKey
      ? requestHash({ route: 'drain', nodeId, reason: body.reason, version })
      : null;
    if (idempotencyKey) {
      const existing = await findOperationByKey(deps.db, idempotencyKey);
      if (existing) {
        if (existing.requestHash !== hash) {
          throw new DrydockError(
            'IDEMPOTENCY_KEY_REUSED',
            'this Idempotency-Key was used for another request',
          );
        }
        return c.json(
          { node: nodeView(node, await labelsOf(deps.db, nodeId)), operation: operationView(existing) },
          200,
        );
      }
    }
    const reasonText = body.reason ?? null;
    const result = await startOperation(deps, {
      workflowType: 'drain',
      workflowId: drainWorkflowId(nodeId),
      input: { nodeId },
      searchAttributes: [
        { key: NodeIdKey, value: nodeId },
        { key: TenantIdKey, value: node.tenantId ?? '' },
        { key: PoolIdKey, value: node.poolId ?? '' },
        { key: LifecycleOperationKey, value: 'drain' },
      ],
      summary: `drain ${node.hostname} (${nodeId}): ${reasonText ?? 'no reason given'}`,
      request: { actor: actorOf(principal), reason: reasonText, version, idempotencyKey, requestHash: hash },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  },
);
