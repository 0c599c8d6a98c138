import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { actorOf, idempotencyScope } from '../../domain/principal';
import { getVisibleNode, labelsOf, nodeView } from '../../db/nodes';
import { operationOfKey, operationView } from '../../db/operations';
import { drainWorkflowId } from '../../workflows/definitions';
import { LifecycleOperationKey, NodeIdKey, PoolIdKey, TenantIdKey } from '../../workflows/search-attributes';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  errorResponses,
  expectedVersion,
  idempotencyHeaders,
  json,
  jsonBody,
  NodeSchema,
  nodeIdParams,
  OperationSchema,
  reason,
  version,
} from '../schemas';
import { requestHash, startOperation } from '../workflows';

export const drainRouter = new OpenAPIHono<AppEnv>();

const drainBody = z.strictObject({ reason: reason.optional(), version: version.optional() });

drainRouter.openapi(
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
    const scope = idempotencyKey ? idempotencyScope(principal) : null;
    const hash = idempotencyKey
      ? requestHash({ route: 'drain', nodeId, reason: body.reason, version })
      : null;
    const request = { idempotencyScope: scope, idempotencyKey, requestHash: hash };
    const existing = await operationOfKey(deps.db, request);
    if (existing) {
      return c.json(
        { node: nodeView(node, await labelsOf(deps.db, nodeId)), operation: operationView(existing) },
        200,
      );
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
      request: { actor: actorOf(principal), reason: reasonText, version, ...request },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  },
);
