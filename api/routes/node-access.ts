import { OpenAPIHono, z } from '@hono/zod-openapi';
import { block, reject, unblock, type Control } from '../../domain/controls';
import type { Action } from '../../domain/principal';
import { requireAction, requireOperator } from '../auth';
import type { AppEnv } from '../env';
import type { Tag } from '../openapi';
import { nodeAnswer, nodeRoute, nodeTarget } from '../node-route';
import { json, mutationBody, NodeSchema, reason, slug, version } from '../schemas';
import { approveNode, controlAccess, revokeNodeIdentity } from '../services/node-access';

/** A control of whether the node may take part at all; its agent notices at once. */
interface AccessRoute {
  path: string;
  operationId: string;
  tags: [Tag];
  summary: string;
  action: Action | 'operator';
  body: z.ZodType<{ reason?: string; version?: number }>;
  control: Control;
}

const ACCESS_CONTROLS: AccessRoute[] = [
  {
    path: '/v1/nodes/{id}/block',
    operationId: 'blockNode',
    tags: ['access'],
    summary: 'Block a node: its agent session closes and its calls get 403; allocations stay',
    action: 'compute:nodes:block',
    body: z.strictObject({ reason, version: version.optional() }),
    control: block,
  },
  {
    path: '/v1/nodes/{id}/unblock',
    operationId: 'unblockNode',
    tags: ['access'],
    summary: 'Unblock a node; its agent notices within ten seconds',
    action: 'compute:nodes:block',
    body: mutationBody,
    control: unblock,
  },
  {
    path: '/v1/nodes/{id}/reject',
    operationId: 'rejectNode',
    tags: ['enrollment'],
    summary: 'Reject a pending node (operator)',
    action: 'operator',
    body: mutationBody,
    control: reject,
  },
];

const approveRoute = nodeRoute({
  path: '/v1/nodes/{id}/approve',
  operationId: 'approveNode',
  tags: ['enrollment'],
  summary: 'Approve a pending node into a pool (operator); acceptance then adopts it',
  body: z.strictObject({ poolId: slug.optional(), reason: reason.optional(), version: version.optional() }),
  answer: nodeAnswer,
});

const revokeIdentityRoute = nodeRoute({
  path: '/v1/nodes/{id}/revoke-identity',
  operationId: 'revokeNodeIdentity',
  tags: ['access'],
  summary: 'Revoke every certificate and credential of a node and raise its identity generation',
  body: mutationBody,
  answer: json(
    z.object({ node: NodeSchema, revokedCertificates: z.number() }),
    'the node and how many certificates',
  ),
});

/** The controls of a node's access and identity: block, unblock, reject, approve, revoke. */
export function nodeAccessRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  for (const spec of ACCESS_CONTROLS) {
    const { path, operationId, tags, summary, body } = spec;
    const route = nodeRoute({
      path,
      operationId,
      tags,
      summary,
      body,
      bodyRequired: body !== mutationBody,
      answer: nodeAnswer,
    });
    router.openapi(route, async (c) => {
      const principal = c.get('principal');
      if (spec.action === 'operator') requireOperator(principal);
      else requireAction(principal, spec.action);
      const target = nodeTarget(c);
      return c.json(await controlAccess(c.get('deps'), target, spec.control), 200);
    });
  }

  router.openapi(approveRoute, async (c) => {
    requireOperator(c.get('principal'));
    const target = { ...nodeTarget(c), poolId: c.req.valid('json').poolId };
    return c.json(await approveNode(c.get('deps'), target), 200);
  });

  router.openapi(revokeIdentityRoute, async (c) => {
    requireAction(c.get('principal'), 'compute:nodes:revoke-identity');
    return c.json(await revokeNodeIdentity(c.get('deps'), nodeTarget(c)), 200);
  });
  return router;
}
