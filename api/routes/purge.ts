import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { getVisibleNode } from '../../db/queries/nodes';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import {
  idempotencyKeyHeaders,
  jsonBody,
  NodeOperationSchema,
  nodeIdParams,
  reason,
  startResponses,
} from '../schemas';
import { purgeNode } from '../services/requests';

const purgeBody = z.strictObject({
  confirm: z.literal(true, { error: 'purge cannot be undone: send "confirm": true' }),
  reason: reason.optional(),
  force: z
    .boolean()
    .optional()
    .openapi({
      description:
        'release the open allocations of the node (allocation.force-released each) in the transaction the purge begins in; ' +
        'without it a node that holds any is refused INVALID_STATE, naming them. false is the same as leaving it out',
    }),
});

const purgeRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/purge',
  operationId: 'purgeNode',
  tags: ['purge'],
  summary: 'Make a node wipe itself from its machine (operator; cannot be undone)',
  request: { params: nodeIdParams, headers: idempotencyKeyHeaders, ...jsonBody(purgeBody, true) },
  responses: startResponses(
    NodeOperationSchema,
    'the signed purge command is queued',
    'a purge already runs',
  ),
});

export function purgeRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(purgeRoute, async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const deps = c.get('deps');
    const node = await getVisibleNode(deps.db, c.req.valid('param').id, principal);
    const { reason, force } = c.req.valid('json');
    const result = await purgeNode(deps, node, {
      principal,
      reason: reason ?? null,
      force: force === true,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      // `force` is bound only when set, so a key of a purge sent before it existed stays the same request.
      binds: { reason, force: force === true ? true : undefined },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  });
  return router;
}
