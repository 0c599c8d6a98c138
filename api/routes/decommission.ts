import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { previewOf } from '../../db/queries/decommission';
import { getVisibleNode } from '../../db/queries/nodes';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import {
  counter,
  errorResponses,
  idempotencyKey,
  json,
  jsonBody,
  nodeIdParams,
  OperationSchema,
  reason,
  startResponses,
  text,
} from '../schemas';
import { decommissionNode } from '../services/requests';

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

const previewRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/decommission/preview',
  operationId: 'previewDecommission',
  tags: ['decommission'],
  summary: 'What a decommission would do, and what blocks it (operator; changes nothing)',
  request: { params: nodeIdParams },
  responses: { 200: json(PreviewSchema, 'the preview'), ...errorResponses },
});

const executeBody = z.strictObject({
  confirm: text({ max: 256, description: 'one of the confirmation identities of the preview' }),
  nodeGeneration: counter,
  dependencyDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "the preview's dependencyDigest (sha256:…)"),
  operator: text({ max: 128, description: 'who runs the decommission' }),
  reason,
});

const executeRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/decommission',
  operationId: 'executeDecommission',
  tags: ['decommission'],
  summary: 'Decommission a node for good (operator; workflow decommission/<nodeId>)',
  request: {
    params: nodeIdParams,
    headers: z.object({
      'idempotency-key': idempotencyKey,
    }),
    ...jsonBody(executeBody, true),
  },
  responses: startResponses(
    OperationSchema,
    'admitted: the decommission runs',
    'this Idempotency-Key already has its operation',
  ),
});

export function decommissionRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(previewRoute, async (c) => {
    requireOperator(c.get('principal'));
    const { db } = c.get('deps');
    const node = await getVisibleNode(db, c.req.valid('param').id, c.get('principal'));
    const { deps: _deps, ...preview } = await previewOf(db, node);
    return c.json(preview, 200);
  });

  router.openapi(executeRoute, async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const deps = c.get('deps');
    const body = c.req.valid('json');
    const node = await getVisibleNode(deps.db, c.req.valid('param').id, principal);
    // Requests racing with one key wait for each other on the node's lock: the first records the
    // decommission (202), the others find it by its key (200).
    const result = await decommissionNode(deps, node, {
      principal,
      ...body,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      binds: body,
    });
    return c.json(result.operation, result.created ? 202 : 200);
  });
  return router;
}
