import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { DURATION_PATTERN } from '../../domain/duration';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { LABEL_KEY, LABEL_VALUE, MAX_LABELS, RESERVED_LABEL_PREFIX } from '../../domain/labels';
import { actorOf, type Principal } from '../../domain/principal';
import { hashSecret, newSecret } from '../../domain/secrets';
import { tokenExpiry, usesLeft } from '../../domain/tokens';
import type { Db } from '../../db/client';
import { joinTokens, pools } from '../../db/schema';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, idOf, json, jsonBody, record, slug, text } from '../schemas';

export const tokensRouter = new OpenAPIHono<AppEnv>();

const TokenSchema = z
  .object({
    id: z.string(),
    poolId: z.string(),
    tenantId: z.string().nullable(),
    labels: z.record(z.string(), z.string()),
    description: z.string().nullable(),
    maxUses: z.number(),
    uses: z.number(),
    usesLeft: z.number().nullable(),
    expiresAt: z.string().nullable(),
    createdBy: z.string(),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .openapi('JoinToken');

function tokenView(t: typeof joinTokens.$inferSelect) {
  return {
    id: t.id,
    poolId: t.poolId,
    tenantId: t.tenantId,
    labels: t.labels,
    description: t.description,
    maxUses: t.maxUses,
    uses: t.uses,
    usesLeft: usesLeft(t),
    expiresAt: t.expiresAt?.toISOString() ?? null,
    createdBy: t.createdBy,
    createdAt: t.createdAt.toISOString(),
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}

/** Pools whose tokens the principal manages: every pool for operators, its own tenant's for tenants. */
async function managedPoolIds(db: Db, principal: Principal): Promise<string[] | 'all'> {
  if (principal.kind === 'operator') return 'all';
  if (principal.kind !== 'tenant') return [];
  const rows = await db.select({ id: pools.id }).from(pools).where(eq(pools.tenantId, principal.tenantId));
  return rows.map((r) => r.id);
}

const tokenLabels = record(
  z.string().regex(LABEL_KEY, 'a label key is up to 128 of letters, digits and . _ / -'),
  z.string().regex(LABEL_VALUE, 'a label value is up to 256 of letters, digits and . _ : / @ + = -'),
)
  .refine((labels) => Object.keys(labels).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`)
  .refine(
    (labels) => Object.keys(labels).every((k) => !k.startsWith(RESERVED_LABEL_PREFIX)),
    `keys under ${RESERVED_LABEL_PREFIX} are reserved`,
  );

tokensRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/tokens',
    summary: 'Create a join token; its secret is shown once',
    request: jsonBody(
      z.strictObject({
        poolId: slug,
        tenantId: slug.optional(),
        ttl: z
          .string()
          .max(32, { error: 'ttl is at most 32 characters', abort: true })
          .regex(DURATION_PATTERN, 'ttl is 0 (never) or a duration such as 24h or 30m')
          .openapi({ description: '0 (never) or a duration from 1ms to 3650d' }),
        maxUses: z.number().int().min(0).max(1_000_000),
        labels: tokenLabels.optional(),
        description: text({ max: 256, description: 'what the token is for' }).optional(),
      }),
      true,
    ),
    responses: { 201: json(TokenSchema.extend({ secret: z.string() }), 'the token'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:tokens:write');
    const body = c.req.valid('json');
    const expiresAt = tokenExpiry(body.ttl, new Date());
    const { db } = c.get('deps');
    const managed = await managedPoolIds(db, principal);
    const [pool] = await db.select().from(pools).where(eq(pools.id, body.poolId));
    if (!pool || (managed !== 'all' && !managed.includes(pool.id))) {
      throw new DrydockError('NOT_FOUND', `pool ${body.poolId} not found`, { poolId: body.poolId });
    }
    if (body.tenantId !== undefined && body.tenantId !== pool.tenantId) {
      throw new DrydockError(
        'INVALID_INPUT',
        `pool ${pool.id} belongs to ${pool.tenantId ?? 'no tenant'}, not ${body.tenantId}`,
      );
    }
    const secret = newSecret('ddj');
    const [token] = await db
      .insert(joinTokens)
      .values({
        id: newId('jt'),
        secretHash: hashSecret(secret),
        poolId: pool.id,
        tenantId: pool.tenantId,
        labels: body.labels ?? {},
        description: body.description ?? null,
        maxUses: body.maxUses,
        expiresAt,
        createdBy: actorOf(principal),
      })
      .returning();
    return c.json({ ...tokenView(token!), secret }, 201);
  },
);

tokensRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/tokens',
    summary: 'List join tokens (never their secrets) with uses left and expiry',
    responses: { 200: json(z.object({ items: z.array(TokenSchema) }), 'tokens'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:tokens:read');
    const { db } = c.get('deps');
    const managed = await managedPoolIds(db, principal);
    if (managed !== 'all' && managed.length === 0) return c.json({ items: [] }, 200);
    const rows = await db
      .select()
      .from(joinTokens)
      .where(managed === 'all' ? undefined : inArray(joinTokens.poolId, managed))
      .orderBy(asc(joinTokens.id));
    return c.json({ items: rows.map(tokenView) }, 200);
  },
);

tokensRouter.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/tokens/{id}',
    summary: 'Revoke a join token: new joins stop; nodes that joined stay',
    request: { params: z.object({ id: idOf('jt') }) },
    responses: { 200: json(TokenSchema, 'the revoked token'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:tokens:write');
    const { db } = c.get('deps');
    const id = c.req.valid('param').id;
    const managed = await managedPoolIds(db, principal);
    const visible =
      managed === 'all' ? undefined : inArray(joinTokens.poolId, managed.length ? managed : ['']);
    const [revoked] = await db
      .update(joinTokens)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(joinTokens.id, id), isNull(joinTokens.revokedAt), visible))
      .returning();
    const [token] = revoked
      ? [revoked]
      : await db
          .select()
          .from(joinTokens)
          .where(and(eq(joinTokens.id, id), visible));
    if (!token) throw new DrydockError('NOT_FOUND', `token ${id} not found`, { tokenId: id });
    return c.json(tokenView(token), 200);
  },
);
