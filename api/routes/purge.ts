import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { getVisibleNode } from '../../db/queries/nodes';
import { drainCancelledSignal, drainWorkflowId, purgeWorkflow } from '../../workflows/definitions';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { idempotencyKeyHeaders, jsonBody, nodeIdParams, reason } from '../schemas';
import { NodeOperationSchema, signalIfRunning, startOperation, startResponses } from '../workflows';

const purgeBody = z.strictObject({
  confirm: z.literal(true, { error: 'purge cannot be undone: send "confirm": true' }),
  reason: reason.optional(),
});

const purgeRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/purge',
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
    const { reason } = c.req.valid('json');
    const result = await startOperation(deps, purgeWorkflow, {
      node,
      principal,
      request: { reason: reason ?? null },
      idempotency: { key: c.req.valid('header')['idempotency-key'], binds: { reason } },
    });
    // The purge's begin ended a drain of the node (superseded): tell it, so it stops at once.
    if (result.created)
      await signalIfRunning(deps.temporal, drainWorkflowId(node.id), drainCancelledSignal.name);
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  });
  return router;
}
