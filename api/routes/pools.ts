import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { CAPACITY_BUCKETS, CAPACITY_HISTORY_WINDOWS, capacityOf } from '../../domain/capacity';
import { capacityHistoryOf } from '../../db/queries/capacity-history';
import { capacityRowsOf, getVisiblePool, listPools, type PoolRow } from '../../db/queries/pools';
import { requireAction, requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { grantsSchema, policyPatchSchema, policySchema, POOL_KINDS } from '../pool-schemas';
import { createPool, updatePool } from '../services/pools';
import { errorResponses, ifMatchHeadersOf, json, jsonBody, reason, slug } from '../schemas';

const PoolSchema = z
  .object({
    id: z.string(),
    kind: z.enum(POOL_KINDS),
    siteId: z.string(),
    tenantId: z.string().nullable(),
    grants: z.array(z.string()),
    policy: policySchema,
    version: z.number().openapi({ description: 'bumped by every change of the pool; its If-Match' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Pool');

function poolView(p: PoolRow) {
  return {
    id: p.id,
    kind: p.kind,
    siteId: p.siteId,
    tenantId: p.tenantId,
    grants: p.grants,
    policy: p.policy,
    version: p.version,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

const createPoolRoute = createRoute({
  method: 'post',
  path: '/v1/pools',
  operationId: 'createPool',
  tags: ['pools'],
  summary: 'Create a pool (operator)',
  request: jsonBody(
    z.strictObject({
      id: slug,
      kind: z.enum(POOL_KINDS),
      siteId: slug,
      tenantId: slug.optional(),
      grants: grantsSchema.optional(),
      policy: policySchema.optional(),
    }),
    true,
  ),
  responses: { 201: json(PoolSchema, 'the pool'), ...errorResponses },
});

const poolIdParams = z.object({ id: slug });

const updatePoolRoute = createRoute({
  method: 'patch',
  path: '/v1/pools/{id}',
  operationId: 'updatePool',
  tags: ['pools'],
  summary: "Change a pool's grants and policy (operator): a JSON merge patch, If-Match the pool's version",
  request: {
    params: poolIdParams,
    headers: ifMatchHeadersOf('pool'),
    ...jsonBody(
      z.strictObject({
        grants: grantsSchema
          .openapi({ description: 'the tenants granted the pool, all of them: replaces the list' })
          .optional(),
        policy: policyPatchSchema
          .openapi({ description: 'a field given is set, null puts it back to its default, absent is kept' })
          .optional(),
        reason: reason.optional(),
      }),
      true,
    ),
  },
  responses: {
    200: json(PoolSchema, 'the pool as it is now (unchanged when nothing differed)'),
    ...errorResponses,
  },
});

const listPoolsRoute = createRoute({
  method: 'get',
  path: '/v1/pools',
  operationId: 'listPools',
  tags: ['pools'],
  summary: 'List the pools the caller can see',
  responses: { 200: json(z.object({ items: z.array(PoolSchema) }), 'pools'), ...errorResponses },
});

const getPoolRoute = createRoute({
  method: 'get',
  path: '/v1/pools/{id}',
  operationId: 'getPool',
  tags: ['pools'],
  summary: 'Get a pool',
  request: { params: poolIdParams },
  responses: { 200: json(PoolSchema, 'the pool'), ...errorResponses },
});

const poolCapacityRoute = createRoute({
  method: 'get',
  path: '/v1/pools/{id}/capacity',
  operationId: 'getPoolCapacity',
  tags: ['pools'],
  summary: 'Live nodes of a pool counted per capacity bucket (first match wins)',
  request: { params: poolIdParams },
  responses: {
    200: json(
      z.object({
        poolId: z.string(),
        total: z.number(),
        buckets: z.record(z.enum(CAPACITY_BUCKETS), z.number()),
      }),
      'counts per bucket',
    ),
    ...errorResponses,
  },
});

const poolCapacityHistoryRoute = createRoute({
  method: 'get',
  path: '/v1/pools/{id}/capacity/history',
  operationId: 'getPoolCapacityHistory',
  tags: ['pools'],
  summary: "A pool's capacity over time: its live nodes per bucket, averaged per step, oldest first",
  request: {
    params: poolIdParams,
    query: z.strictObject({
      window: z
        .enum(Object.keys(CAPACITY_HISTORY_WINDOWS) as [keyof typeof CAPACITY_HISTORY_WINDOWS])
        .default('24h')
        .openapi({ description: 'how far back: 1h (1-minute steps), 24h (10-minute steps), 7d (hourly)' }),
    }),
  },
  responses: {
    200: json(
      z.object({
        poolId: z.string(),
        window: z.enum(Object.keys(CAPACITY_HISTORY_WINDOWS) as [keyof typeof CAPACITY_HISTORY_WINDOWS]),
        stepSeconds: z.number().int(),
        points: z.array(
          z.object({
            at: z.string().openapi({ description: "the step's start" }),
            total: z.number(),
            ...(Object.fromEntries(CAPACITY_BUCKETS.map((b) => [b, z.number()])) as Record<
              (typeof CAPACITY_BUCKETS)[number],
              z.ZodNumber
            >),
          }),
        ),
      }),
      'the recorded minutes, averaged per step (steps with none recorded are absent)',
    ),
    ...errorResponses,
  },
});

/** Pools: created and changed by operators, read by whoever they belong to or are granted to. */
export function poolsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(createPoolRoute, async (c) => {
    requireOperator(c.get('principal'));
    const body = c.req.valid('json');
    const pool = await createPool(c.get('deps').db, {
      id: body.id,
      kind: body.kind,
      siteId: body.siteId,
      tenantId: body.tenantId ?? null,
      grants: body.grants ?? [],
      policy: body.policy ?? {},
    });
    return c.json(poolView(pool), 201);
  });

  router.openapi(updatePoolRoute, async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const { reason: why, ...patch } = c.req.valid('json');
    const pool = await updatePool(c.get('deps').db, {
      id: c.req.valid('param').id,
      principal,
      version: c.req.valid('header')['if-match'],
      patch,
      reason: why ?? null,
    });
    return c.json(poolView(pool), 200);
  });

  router.openapi(listPoolsRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    return c.json({ items: (await listPools(c.get('deps').db, principal)).map(poolView) }, 200);
  });

  router.openapi(getPoolRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    return c.json(poolView(await getVisiblePool(c.get('deps').db, c.req.valid('param').id, principal)), 200);
  });

  router.openapi(poolCapacityRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const pool = await getVisiblePool(db, c.req.valid('param').id, principal);
    const rows = await capacityRowsOf(db, pool.id);
    return c.json({ poolId: pool.id, total: rows.length, buckets: capacityOf(rows) }, 200);
  });

  router.openapi(poolCapacityHistoryRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const pool = await getVisiblePool(db, c.req.valid('param').id, principal);
    const { window } = c.req.valid('query');
    const { minutes, stepMinutes } = CAPACITY_HISTORY_WINDOWS[window];
    const since = new Date(Date.now() - minutes * 60_000);
    const points = await capacityHistoryOf(db, pool.id, since, stepMinutes);
    return c.json(
      {
        poolId: pool.id,
        window,
        stepSeconds: stepMinutes * 60,
        points: points.map((p) => ({ ...p, at: p.at.toISOString() })),
      },
      200,
    );
  });

  return router;
}
