import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, asc, eq, isNull, or, sql } from 'drizzle-orm';
import { CAPACITY_BUCKETS, capacityOf } from '../../domain/capacity';
import type { Db } from '../../db/client';
import { DURATION_PATTERN, parseDuration } from '../../domain/duration';
import { DrydockError } from '../../domain/errors';
import type { Principal } from '../../domain/principal';
import { isUniqueViolation } from '../../db/errors';
import { nodes, pools } from '../../db/schema';
import { requireAction, requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, json, jsonBody, slug } from '../schemas';

export const poolsRouter = new OpenAPIHono<AppEnv>();

const POOL_KINDS = ['bare-metal', 'provider', 'vps-host', 'tenant-root'] as const;

/** A count (`3`) or a percent string (`"40%"`). */
const countOrPercent = z.union([
  z.number().int().min(0).max(100_000),
  z.string().regex(/^(100|[1-9]?\d)%$/, 'a percent such as "40%"'),
]);

/** A node unreachable for longer than a month is long gone; a larger value is a typo. */
const MAX_LOST_AFTER_MS = 30 * 86_400_000;

const policySchema = z.strictObject({
  lostAfter: z
    .string()
    .max(32, { error: 'lostAfter is at most 32 characters', abort: true })
    .regex(DURATION_PATTERN, 'lostAfter is a duration such as 10m')
    .refine((v) => {
      const ms = parseDuration(v)!;
      return ms > 0 && ms <= MAX_LOST_AFTER_MS;
    }, 'lostAfter is more than 0 and at most 30d')
    .openapi({
      description: 'how long an unreachable node stays before it is lost: more than 0, at most 30d',
    })
    .optional(),
  maxUnavailable: countOrPercent.optional(),
  maxUnhealthy: countOrPercent.optional(),
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

function poolView(p: typeof pools.$inferSelect) {
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

async function visiblePool(db: Db, id: string, principal: Principal) {
  const [pool] = await db
    .select()
    .from(pools)
    .where(and(eq(pools.id, id), poolVisibleTo(principal)));
  if (!pool) throw new DrydockError('NOT_FOUND', `pool ${id} not found`, { poolId: id });
  return pool;
}

function poolVisibleTo(principal: Principal) {
  if (principal.kind === 'operator') return sql`true`;
  if (principal.kind === 'node') return sql`false`;
  return or(eq(pools.tenantId, principal.tenantId), sql`${principal.tenantId} = any(${pools.grants})`)!;
}

poolsRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/pools',
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
  }),
  async (c) => {
    requireOperator(c.get('principal'));
    const body = c.req.valid('json');
    try {
      const [pool] = await c
        .get('deps')
        .db.insert(pools)
        .values({
          id: body.id,
          kind: body.kind,
          siteId: body.siteId,
          tenantId: body.tenantId ?? null,
          grants: body.grants ?? [],
          policy: body.policy ?? {},
        })
        .returning();
      return c.json(poolView(pool!), 201);
    } catch (error) {
      if (isUniqueViolation(error)) throw new DrydockError('CONFLICT', `pool ${body.id} already exists`);
      throw error;
    }
  },
);

poolsRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/pools',
    summary: 'List the pools the caller can see',
    responses: { 200: json(z.object({ items: z.array(PoolSchema) }), 'pools'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const rows = await c
      .get('deps')
      .db.select()
      .from(pools)
      .where(poolVisibleTo(principal))
      .orderBy(asc(pools.id));
    return c.json({ items: rows.map(poolView) }, 200);
  },
);

poolsRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/pools/{id}',
    summary: 'Get a pool',
    request: { params: z.object({ id: slug }) },
    responses: { 200: json(PoolSchema, 'the pool'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    return c.json(poolView(await visiblePool(c.get('deps').db, c.req.valid('param').id, principal)), 200);
  },
);

poolsRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/pools/{id}/capacity',
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
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { db } = c.get('deps');
    const pool = await visiblePool(db, c.req.valid('param').id, principal);
    const rows = await db
      .select({
        maintenance: nodes.maintenance,
        liveness: nodes.liveness,
        cordoned: nodes.cordoned,
        noScheduleReasons: nodes.noScheduleReasons,
      })
      .from(nodes)
      .where(and(eq(nodes.poolId, pool.id), isNull(nodes.deletedAt)));
    return c.json({ poolId: pool.id, total: rows.length, buckets: capacityOf(rows) }, 200);
  },
);
