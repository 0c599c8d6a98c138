import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { idPattern } from '../../domain/ids';
import { OPERATION_KINDS, OPERATION_STATUSES } from '../../domain/operation';
import { getVisibleOperation, listOperations, operationView } from '../../db/queries/operations';
import { requireAction, requireOperator } from '../auth';
import { cancelOperation, resumeOperation } from '../services/operations';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  cursor,
  errorResponses,
  idOf,
  json,
  jsonBody,
  limit,
  OperationSchema,
  reason,
  slug,
} from '../schemas';

const getOperationRoute = createRoute({
  method: 'get',
  path: '/v1/operations/{id}',
  operationId: 'getOperation',
  tags: ['operations'],
  summary: 'An operation, with its progress as its record says (whether or not a worker is up)',
  request: { params: z.object({ id: idOf('op') }) },
  responses: { 200: json(OperationSchema, 'the operation'), ...errorResponses },
});

const listOperationsRoute = createRoute({
  method: 'get',
  path: '/v1/operations',
  operationId: 'listOperations',
  tags: ['operations'],
  summary: 'List operations, newest first',
  request: {
    query: z.strictObject({
      nodeId: idOf('node').optional(),
      poolId: slug.optional().openapi({
        description: "the pool's operations: its pool drains, and those of nodes in it when they began",
      }),
      kind: z.enum(OPERATION_KINDS).optional(),
      status: z.enum(OPERATION_STATUSES).optional(),
      limit: limit(100, 50),
      cursor: cursor.optional(),
    }),
  },
  responses: {
    200: json(z.object({ items: z.array(OperationSchema), nextCursor: z.string().nullable() }), 'operations'),
    ...errorResponses,
  },
});

const cancelBody = z.strictObject({
  reason: reason.optional(),
  children: z
    .enum(['finish', 'cancel'])
    .optional()
    .describe(
      'pool drains and rolling maintenances only: leave the node operations already running to finish (default), or cancel them too',
    ),
});

const cancelOperationRoute = createRoute({
  method: 'delete',
  path: '/v1/operations/{id}',
  operationId: 'cancelOperation',
  tags: ['operations'],
  summary:
    'Cancel an operation (operator): cleaned up at once, in one transaction; its workflow is woken and ends',
  request: { params: z.object({ id: idOf('op') }), ...jsonBody(cancelBody) },
  responses: {
    200: json(OperationSchema, 'the operation, cancelled (also when it already was)'),
    ...errorResponses,
  },
});

const resumeOperationRoute = createRoute({
  method: 'post',
  path: '/v1/operations/{id}/resume',
  operationId: 'resumeOperation',
  tags: ['operations'],
  summary: 'Resume a rolling maintenance paused at maxFailures (operator): maxFailures counts again from now',
  request: {
    params: z.object({ id: idOf('op') }),
    ...jsonBody(z.strictObject({ reason: reason.optional() })),
  },
  responses: { 200: json(OperationSchema, 'the operation, resumed'), ...errorResponses },
});

/** Reading operation records, cancelling one, resuming a paused rolling maintenance. */
export function operationsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(getOperationRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const op = await getVisibleOperation(c.get('deps').db, c.req.valid('param').id, principal);
    return c.json(operationView(op), 200);
  });

  router.openapi(listOperationsRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { cursor, limit, ...filter } = c.req.valid('query');
    const before = decodeCursor(cursor, idPattern('op'));
    const rows = await listOperations(c.get('deps').db, principal, { ...filter, before, limit: limit + 1 });
    const result = page(rows, limit, (op) => op.id);
    return c.json({ items: result.items.map(operationView), nextCursor: result.nextCursor }, 200);
  });

  router.openapi(cancelOperationRoute, async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const operation = await cancelOperation(
      c.get('deps'),
      c.req.valid('param').id,
      principal,
      c.req.valid('json') ?? {},
    );
    return c.json(operationView(operation), 200);
  });

  router.openapi(resumeOperationRoute, async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const body = c.req.valid('json') ?? {};
    const operation = await resumeOperation(
      c.get('deps'),
      c.req.valid('param').id,
      principal,
      body.reason ?? null,
    );
    return c.json(operationView(operation), 200);
  });

  return router;
}
