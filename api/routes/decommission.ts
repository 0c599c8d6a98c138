import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { actorOf, idempotencyScope } from '../../domain/principal';
import { previewOf } from '../../db/decommission';
import { getVisibleNode } from '../../db/nodes';
import { operationOfKey, operationView } from '../../db/operations';
import {
  decommissionWorkflowId,
  type BeginResult,
  type DecommissionRequest,
} from '../../workflows/definitions';
import { LifecycleOperationKey, NodeIdKey, PoolIdKey, TenantIdKey } from '../../workflows/search-attributes';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { SingleFlight } from '../single-flight';
import {
  counter,
  errorResponses,
  idempotencyKey,
  json,
  jsonBody,
  nodeIdParams,
  OperationSchema,
  reason,
  text,
} from '../schemas';
import { requestHash, startOperation } from '../workflows';

export const decommissionRouter = new OpenAPIHono<AppEnv>();

const startsInFlight = new SingleFlight<BeginResult>();

const PreviewSchema = z
  .object({
    nodeId: z.string(),
    hostname: z.string(),
    displayName: z.string().nullable(),
    confirmationIdentities: z.array(z.string()),
    nodeGeneration: z.number(),
    dependencyDigest: z.string(),
    ready: z.boolean(),
    blockers: z.array(z.object({ kind: z.string(), id: z.string(), message: z.string() })),
    cleanup: z.array(z.object({ kind: z.string(), count: z.number() })),
    retained: z.array(z.object({ kind: z.string(), count: z.number() })),
  })
  .openapi('DecommissionPreview');

decommissionRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/decommission/preview',
    summary: 'What a decommission would do, and what blocks it (operator; changes nothing)',
    request: { params: nodeIdParams },
    responses: { 200: json(PreviewSchema, 'the preview'), ...errorResponses },
  }),
  async (c) => {
    requireOperator(c.get('principal'));
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, c.get('principal'));
    const { deps: _deps, ...preview } = await previewOf(db, node);
    return c.json(preview, 200);
  },
);

const executeBody = z.strictObject({
  confirm: text({ max: 256, description: 'one of the confirmation identities of the preview' }),
  nodeGeneration: counter,
  dependencyDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "the preview's dependencyDigest (sha256:…)"),
  operator: text({ max: 128, description: 'who runs the decommission' }),
  reason,
});

decommissionRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/decommission',
    summary: 'Decommission a node for good (operator; workflow decommission/<nodeId>)',
    request: {
      params: nodeIdParams,
      headers: z.object({
        'idempotency-key': idempotencyKey,
      }),
      ...jsonBody(executeBody, true),
    },
    responses: {
      202: json(OperationSchema, 'admitted: the decommission runs'),
      200: json(OperationSchema, 'this Idempotency-Key already has its operation'),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const deps = c.get('deps');
    const nodeId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const idempotencyKey = c.req.valid('header')['idempotency-key'];
    const hash = requestHash({ route: 'decommission', nodeId, ...body });
    const node = await getVisibleNode(deps.db, nodeId, principal);
    const scope = idempotencyScope(principal);
    const existing = await operationOfKey(deps.db, {
      idempotencyScope: scope,
      idempotencyKey,
      requestHash: hash,
    });
    if (existing) return c.json(operationView(existing), 200);
    // Requests racing with one key share the first one's start: it answers 202, the others 200.
    // (Across API processes Temporal's update id still yields one operation; only the codes differ.)
    const request: DecommissionRequest = {
      actor: actorOf(principal),
      reason: body.reason,
      idempotencyScope: scope,
      idempotencyKey,
      requestHash: hash,
      confirm: body.confirm,
      nodeGeneration: body.nodeGeneration,
      dependencyDigest: body.dependencyDigest,
      operator: body.operator,
    };
    const { result, leader } = await startsInFlight.run(`${scope}/${idempotencyKey}`, hash, () =>
      startOperation(deps, {
        workflowType: 'decommission',
        workflowId: decommissionWorkflowId(nodeId),
        input: { nodeId },
        searchAttributes: [
          { key: NodeIdKey, value: nodeId },
          { key: TenantIdKey, value: node.tenantId ?? '' },
          { key: PoolIdKey, value: node.poolId ?? '' },
          { key: LifecycleOperationKey, value: 'decommission' },
        ],
        summary: `decommission ${node.hostname} (${nodeId}) by ${body.operator}: ${body.reason}`,
        request,
      }),
    );
    return c.json(result.operation, leader && result.created ? 202 : 200);
  },
);
