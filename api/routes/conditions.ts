import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { nodeAnswer } from '../node-route';
import {
  conditionType,
  errorResponses,
  expectedVersion,
  ifMatchHeaders,
  jsonBody,
  nodeIdParams,
  reason,
  version,
} from '../schemas';
import { clearNodeCondition } from '../services/conditions';

const clearConditionRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/conditions/{type}/clear',
  operationId: 'clearNodeCondition',
  tags: ['remediation'],
  summary:
    'Clear a true condition of the node by hand: false, its NoSchedule reason gone, its remediation woken',
  request: {
    params: nodeIdParams.extend({
      type: conditionType.openapi({ param: { name: 'type', in: 'path' }, example: 'GpuXidError' }),
    }),
    headers: ifMatchHeaders,
    ...jsonBody(z.strictObject({ reason, version: version.optional() }), true),
  },
  responses: { 200: nodeAnswer, ...errorResponses },
});

/** What an operator does to a node's conditions by hand. */
export function conditionsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(clearConditionRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:remediate');
    const { id, type } = c.req.valid('param');
    const body = c.req.valid('json');
    const node = await clearNodeCondition(c.get('deps'), {
      nodeId: id,
      principal,
      version: expectedVersion(body.version, c.req.valid('header')['if-match']),
      type,
      reason: body.reason,
    });
    return c.json(node, 200);
  });
  return router;
}
