import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { CONDITION_TYPE } from '../../domain/remediation';
import { getOperableNode } from '../../db/queries/nodes';
import { requireAction, requireAgent } from '../auth';
import type { AppEnv } from '../env';
import {
  errorResponses,
  idempotencyKeyHeaders,
  json,
  jsonBody,
  nodeIdParams,
  OperationSchema,
  reason,
  startResponses,
} from '../schemas';
import { reportNodeCondition } from '../services/remediation';
import { remediateNode } from '../services/requests';

const conditionType = z
  .string()
  .regex(CONDITION_TYPE, 'a condition type such as GpuXidError: a letter, then letters and digits');

const conditionsRoute = createRoute({
  method: 'post',
  path: '/v1/agent/conditions',
  operationId: 'reportCondition',
  tags: ['agent'],
  summary: 'The agent reports a fault condition; a true one starts remediation unless one runs',
  request: jsonBody(
    z.strictObject({
      type: conditionType,
      status: z.boolean(),
      reason: reason.optional(),
    }),
    true,
  ),
  responses: {
    200: json(
      z.object({
        nodeId: z.string(),
        conditions: z.array(z.unknown()),
        remediation: OperationSchema.nullable(),
        healthyAfterSeconds: z.number().int().min(0).openapi({
          description:
            'how long this condition type must hold clear before the agent reports it cleared (pool policy healthyAfter)',
        }),
      }),
      'the node conditions, and the remediation the report started or joined',
    ),
    ...errorResponses,
  },
});

const remediateRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/remediations',
  operationId: 'remediateNode',
  tags: ['remediation'],
  summary:
    'Remediate a condition of the node (workflow remediation/<nodeId>); one it has not reported is recorded as operator-reported',
  request: {
    params: nodeIdParams,
    headers: idempotencyKeyHeaders,
    ...jsonBody(z.strictObject({ condition: conditionType, reason: reason.optional() }), true),
  },
  responses: startResponses(
    z.object({ operation: OperationSchema }),
    'the remediation began',
    'a remediation already runs (a condition other than its own is remediated after it)',
  ),
});

export function remediationRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(conditionsRoute, async (c) => {
    const principal = c.get('principal');
    const node = requireAgent(principal, c.get('agentNode'));
    const body = c.req.valid('json');
    const deps = c.get('deps');
    const answer = await reportNodeCondition(deps, node, principal, {
      type: body.type,
      status: body.status,
      reason: body.reason ?? null,
    });
    return c.json(answer, 200);
  });

  router.openapi(remediateRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:remediate');
    const deps = c.get('deps');
    const body = c.req.valid('json');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const result = await remediateNode(deps, node, {
      principal,
      condition: body.condition,
      automatic: false,
      reason: body.reason ?? null,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      binds: { condition: body.condition, automatic: false, reason: body.reason ?? null },
    });
    return c.json({ operation: result.operation }, result.created ? 202 : 200);
  });
  return router;
}
