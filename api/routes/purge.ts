import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { actorOf } from '../../domain/principal';
import { getVisibleNode } from '../../db/nodes';
import { purgeWorkflowId } from '../../workflows/definitions';
import { LifecycleOperationKey, NodeIdKey, PoolIdKey, TenantIdKey } from '../../workflows/search-attributes';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import {
  errorResponses,
  json,
  jsonBody,
  NodeSchema,
  nodeIdParams,
  OperationSchema,
  reason,
} from '../schemas';
import { startOperation } from '../workflows';

export const purgeRouter = new OpenAPIHono<AppEnv>();

purgeRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/purge',
    summary: 'Make a node wipe itself from its machine (operator; cannot be undone)',
    request: {
      params: nodeIdParams,
      ...jsonBody(
        z.strictObject({
          confirm: z.literal(true, { error: 'purge cannot be undone: send "confirm": true' }),
          reason: reason.optional(),
        }),
        true,
      ),
    },
    responses: {
      202: json(
        z.object({ node: NodeSchema, operation: OperationSchema }),
        'the signed purge command is queued',
      ),
      200: json(z.object({ node: NodeSchema, operation: OperationSchema }), 'a purge already runs'),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const deps = c.get('deps');
    const nodeId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const node = await getVisibleNode(deps.db, nodeId, principal);
    const reasonText = body.reason ?? null;
    const result = await startOperation(deps, {
      workflowType: 'purge',
      workflowId: purgeWorkflowId(nodeId),
      input: { nodeId },
      searchAttributes: [
        { key: NodeIdKey, value: nodeId },
        { key: TenantIdKey, value: node.tenantId ?? '' },
        { key: PoolIdKey, value: node.poolId ?? '' },
        { key: LifecycleOperationKey, value: 'purge' },
      ],
      summary: `purge ${node.hostname} (${nodeId}): ${reasonText ?? 'no reason given'}`,
      request: {
        actor: actorOf(principal),
        reason: reasonText,
        idempotencyScope: null,
        idempotencyKey: null,
        requestHash: null,
      },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  },
);
