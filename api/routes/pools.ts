import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { CAPACITY_BUCKETS, capacityOf } from '../../domain/capacity';
import { DURATION_PATTERN, parseDuration } from '../../domain/duration';
import {
  ACTION_NAME,
  CONDITION_TYPE,
  MAX_ATTEMPT_TIMEOUT_MS,
  MAX_HEALTHY_AFTER_MS,
  MAX_LADDER_RUNGS,
} from '../../domain/remediation';
import { capacityRowsOf, getVisiblePool, listPools, type PoolRow } from '../../db/queries/pools';
import { requireAction, requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { createPool } from '../services/pools';
import { errorResponses, json, jsonBody, record, slug } from '../schemas';

const POOL_KINDS = ['bare-metal', 'provider', 'vps-host', 'tenant-root'] as const;

/** A count (`3`) or a percent string (`"40%"`). */
const countOrPercent = z.union([
  z.number().int().min(0).max(100_000),
  z.string().regex(/^(100|[1-9]?\d)%$/, 'a percent such as "40%"'),
]);

/** A node unreachable for longer than a month is long gone; a larger value is a typo. */
const MAX_LOST_AFTER_MS = 30 * 86_400_000;

/** A duration string (`10m`) within bounds: above 0 (or at least 0 when `zero` is allowed), at most `max`. */
function boundedDuration(name: string, bounds: { zero: boolean; maxMs: number; max: string }) {
  const floor = bounds.zero ? 'at least 0' : 'more than 0';
  return z
    .string()
    .max(32, { error: `${name} is at most 32 characters`, abort: true })
    .regex(DURATION_PATTERN, `${name} is a duration such as 10m`)
    .refine((v) => {
      const ms = parseDuration(v)!;
      return (bounds.zero ? ms >= 0 : ms > 0) && ms <= bounds.maxMs;
    }, `${name} is ${floor} and at most ${bounds.max}`);
}

/** One condition type's remediation: its ladder of actions, attempt timeout and healthyAfter. */
const conditionRemediationSchema = z.strictObject({
  ladder: z
    .array(z.string().max(64).regex(ACTION_NAME, 'an action name such as reset-accelerator'))
    .min(1, 'a ladder has at least one action')
    .max(MAX_LADDER_RUNGS, `a ladder has at most ${MAX_LADDER_RUNGS} actions`)
    .openapi({
      description: 'the actions tried in order, one per attempt (default reset-accelerator, reboot)',
    })
    .optional(),
  attemptTimeout: boundedDuration('attemptTimeout', {
    zero: false,
    maxMs: MAX_ATTEMPT_TIMEOUT_MS,
    max: '24h',
  })
    .openapi({
      description:
        'how long one attempt waits for the condition to clear: more than 0, at most 24h (default 10m)',
    })
    .optional(),
  healthyAfter: boundedDuration('healthyAfter', { zero: true, maxMs: MAX_HEALTHY_AFTER_MS, max: '1h' })
    .openapi({
      description:
        'how long the condition must hold clear before the agent reports it cleared: 0 to 1h (default 60s)',
    })
    .optional(),
});

const policySchema = z.strictObject({
  lostAfter: boundedDuration('lostAfter', { zero: false, maxMs: MAX_LOST_AFTER_MS, max: '30d' })
    .openapi({
      description: 'how long an unreachable node stays before it is lost: more than 0, at most 30d',
    })
    .optional(),
  maxUnavailable: countOrPercent.optional(),
  maxUnhealthy: countOrPercent.optional(),
  remediation: record(
    z
      .string()
      .regex(CONDITION_TYPE, 'a condition type such as GpuXidError: a letter, then letters and digits'),
    conditionRemediationSchema,
  )
    .refine((r) => Object.keys(r).length <= 64, 'at most 64 condition types')
    .openapi({ description: 'remediation per condition type (docs/lifecycle/remediation.md)' })
    .optional(),
});

const PoolSchema = z
  .object({
    id: z.string(),
    kind: z.enum(POOL_KINDS),
    siteId: z.string(),
    tenantId: z.string().nullable(),
    grants: z.array(z.string()),
    policy: policySchema,
    createdAt: z.string(),
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
    createdAt: p.createdAt.toISOString(),
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
      grants: z.array(slug).max(64).optional(),
      policy: policySchema.optional(),
    }),
    true,
  ),
  responses: { 201: json(PoolSchema, 'the pool'), ...errorResponses },
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
  request: { params: z.object({ id: slug }) },
  responses: { 200: json(PoolSchema, 'the pool'), ...errorResponses },
});

const poolCapacityRoute = createRoute({
  method: 'get',
  path: '/v1/pools/{id}/capacity',
  operationId: 'getPoolCapacity',
  tags: ['pools'],
  summary: 'Live nodes of a pool counted per capacity bucket (first match wins)',
  request: { params: z.object({ id: slug }) },
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

/** Pools: created by operators, read by whoever they belong to or are granted to. */
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

  return router;
}
