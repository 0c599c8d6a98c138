import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import { approve, block, reject, revokeIdentityOf, unblock, type Control } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import type { Action, Principal } from '../../domain/principal';
import type { Tx } from '../../db/client';
import { revokeIdentity } from '../../db/identity';
import { runAcceptance } from '../../db/join';
import { changeNodeIn, getVisibleNode, labelsOf, lockNode, nodeView } from '../../db/nodes';
import { pools } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import { requireAction, requireOperator } from '../auth';
import type { AppDeps, AppEnv } from '../env';
import {
  errorResponses,
  expectedVersion,
  ifMatchHeaders,
  json,
  jsonBody,
  mutationBody,
  NodeSchema,
  nodeIdParams,
  reason,
  slug,
  version,
} from '../schemas';

export const nodeAccessRouter = new OpenAPIHono<AppEnv>();

/**
 * Runs a control that the node's agent must notice at once: the change, `after` steps in the same
 * transaction, and a wake-up of the agent's session in every API process.
 */
async function changeAndWake(
  deps: AppDeps,
  input: { nodeId: string; principal: Principal; version?: number; reason?: string | null },
  control: (tx: Tx) => Promise<Control>,
) {
  const result = await deps.db.transaction(async (tx) => {
    const changed = await changeNodeIn(tx, { ...input, control: await control(tx) });
    if (changed.changed) await wakeNode(tx, input.nodeId);
    return changed;
  });
  if (result.changed) {
    deps.wakeups.wake(input.nodeId);
    deps.heartbeats.forget(input.nodeId);
  }
  return result;
}

function accessRoute(spec: {
  path: string;
  summary: string;
  action: Action | 'operator';
  body: z.ZodType<{ reason?: string; version?: number }>;
  control: Control;
}) {
  nodeAccessRouter.openapi(
    createRoute({
      method: 'post',
      path: spec.path,
      summary: spec.summary,
      request: {
        params: nodeIdParams,
        headers: ifMatchHeaders,
        ...jsonBody(spec.body, spec.body !== mutationBody),
      },
      responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
    }),
    async (c) => {
      const principal = c.get('principal');
      if (spec.action === 'operator') requireOperator(principal);
      else requireAction(principal, spec.action);
      const body = c.req.valid('json');
      const { view } = await changeAndWake(
        c.get('deps'),
        {
          nodeId: c.req.valid('param').id,
          principal,
          version: expectedVersion(body.version, c.req.valid('header')['if-match']),
          reason: body.reason,
        },
        async () => spec.control,
      );
      return c.json(view, 200);
    },
  );
}

accessRoute({
  path: '/v1/nodes/{id}/block',
  summary: 'Block a node: its agent session closes and its calls get 403; allocations stay',
  action: 'compute:nodes:block',
  body: z.strictObject({ reason, version: version.optional() }),
  control: block,
});

accessRoute({
  path: '/v1/nodes/{id}/unblock',
  summary: 'Unblock a node; its agent notices within ten seconds',
  action: 'compute:nodes:block',
  body: mutationBody,
  control: unblock,
});

accessRoute({
  path: '/v1/nodes/{id}/reject',
  summary: 'Reject a pending node (operator)',
  action: 'operator',
  body: mutationBody,
  control: reject,
});

nodeAccessRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/approve',
    summary: 'Approve a pending node into a pool (operator); acceptance then adopts it',
    request: {
      params: nodeIdParams,
      headers: ifMatchHeaders,
      ...jsonBody(
        z.strictObject({ poolId: slug.optional(), reason: reason.optional(), version: version.optional() }),
      ),
    },
    responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const body = c.req.valid('json');
    const deps = c.get('deps');
    const nodeId = c.req.valid('param').id;
    await changeAndWake(
      deps,
      {
        nodeId,
        principal,
        version: expectedVersion(body.version, c.req.valid('header')['if-match']),
        reason: body.reason,
      },
      async (tx) => {
        const node = await lockNode(tx, nodeId, principal);
        const poolId = body.poolId ?? node.requestedPoolId;
        if (!poolId) throw new DrydockError('INVALID_INPUT', 'give poolId: the node asked for no pool');
        const [pool] = await tx.select().from(pools).where(eq(pools.id, poolId));
        if (!pool) throw new DrydockError('INVALID_INPUT', `pool ${poolId} does not exist`, { poolId });
        return approve(pool);
      },
    );
    await runAcceptance(deps.db, nodeId);
    const node = await getVisibleNode(deps.db, nodeId, principal);
    return c.json(nodeView(node, await labelsOf(deps.db, nodeId)), 200);
  },
);

nodeAccessRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/revoke-identity',
    summary: 'Revoke every certificate and credential of a node and raise its identity generation',
    request: { params: nodeIdParams, headers: ifMatchHeaders, ...jsonBody(mutationBody) },
    responses: {
      200: json(
        z.object({ node: NodeSchema, revokedCertificates: z.number() }),
        'the node and how many certificates',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:revoke-identity');
    const body = c.req.valid('json');
    const nodeId = c.req.valid('param').id;
    let revokedCertificates = 0;
    const { view } = await changeAndWake(
      c.get('deps'),
      {
        nodeId,
        principal,
        version: expectedVersion(body.version, c.req.valid('header')['if-match']),
        reason: body.reason,
      },
      async (tx) => {
        const node = await lockNode(tx, nodeId, principal);
        revokedCertificates = await revokeIdentity(tx, nodeId, body.reason ?? 'identity revoked');
        return revokeIdentityOf(node.identityGeneration, revokedCertificates);
      },
    );
    return c.json({ node: view, revokedCertificates }, 200);
  },
);
