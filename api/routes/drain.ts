import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { getOperableNode } from '../../db/queries/nodes';
import { resolveDeadline } from '../../domain/deadline';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  deadlineText,
  expectedVersion,
  idempotencyHeaders,
  jsonBody,
  NodeOperationSchema,
  nodeIdParams,
  reason,
  startResponses,
  version,
} from '../schemas';
import { drainNode } from '../services/requests';

const drainBody = z.strictObject({
  reason: reason.optional(),
  version: version.optional(),
  deadline: deadlineText(
    'when live allocations are released by force, within the pool disruption budget: an RFC 3339 ' +
      'time (Z or an offset) or a duration from now (2h, 90m; 0s = now); not past, at most 30 days ahead. ' +
      'Without it the drain only waits.',
  ).optional(),
});

const drainRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/drain',
  operationId: 'drainNode',
  tags: ['drain'],
  summary:
    'Cordon a node and wait for it to empty (workflow drain/<nodeId>); recorded at once, run by a worker',
  request: { params: nodeIdParams, headers: idempotencyHeaders, ...jsonBody(drainBody) },
  responses: startResponses(NodeOperationSchema, 'the drain began', 'the drain already runs'),
});

export function drainRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(drainRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:drain');
    const deps = c.get('deps');
    const headers = c.req.valid('header');
    const body = c.req.valid('json');
    const version = expectedVersion(body.version, headers['if-match']);
    // Fixed here, once: a retry of the same request (Idempotency-Key) answers the drain it began.
    const deadline = body.deadline === undefined ? null : resolveDeadline(body.deadline, Date.now());
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const result = await drainNode(deps, node, {
      principal,
      reason: body.reason ?? null,
      version,
      deadline,
      idempotencyKey: headers['idempotency-key'],
      binds: { reason: body.reason, version, deadline: body.deadline },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  });
  return router;
}
