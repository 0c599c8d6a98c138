import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { DURATION_PATTERN } from '../../domain/duration';
import { DrydockError } from '../../domain/errors';
import { LABEL_KEY, LABEL_VALUE, MAX_LABELS, RESERVED_LABEL_PREFIX } from '../../domain/labels';
import { actorOf } from '../../domain/principal';
import { tokenExpiry, usesLeft } from '../../domain/tokens';
import { getOperablePool } from '../../db/queries/pools';
import { listTokens, managedPoolIds, type JoinTokenRow } from '../../db/queries/tokens';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { createToken, revokeToken } from '../services/tokens';
import { errorResponses, idOf, json, jsonBody, record, slug, text } from '../schemas';

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

function tokenView(t: JoinTokenRow) {
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

const tokenLabels = record(
  z.string().regex(LABEL_KEY, 'a label key is up to 128 of letters, digits and . _ / -'),
  z.string().regex(LABEL_VALUE, 'a label value is up to 256 of letters, digits and . _ : / @ + = -'),
)
  .refine((labels) => Object.keys(labels).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`)
  .refine(
    (labels) => Object.keys(labels).every((k) => !k.startsWith(RESERVED_LABEL_PREFIX)),
    `keys under ${RESERVED_LABEL_PREFIX} are reserved`,
  );

const createTokenRoute = createRoute({
  method: 'post',
  path: '/v1/tokens',
  operationId: 'createJoinToken',
  tags: ['tokens'],
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
});

const listTokensRoute = createRoute({
  method: 'get',
  path: '/v1/tokens',
  operationId: 'listJoinTokens',
  tags: ['tokens'],
  summary: 'List join tokens (never their secrets) with uses left and expiry',
  responses: { 200: json(z.object({ items: z.array(TokenSchema) }), 'tokens'), ...errorResponses },
});

const revokeTokenRoute = createRoute({
  method: 'delete',
  path: '/v1/tokens/{id}',
  operationId: 'revokeJoinToken',
  tags: ['tokens'],
  summary: 'Revoke a join token: new joins stop; nodes that joined stay',
  request: { params: z.object({ id: idOf('jt') }) },
  responses: { 200: json(TokenSchema, 'the revoked token'), ...errorResponses },
});

/** Join tokens: operators manage every pool's, a tenant its own pools'. */
export function tokensRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(createTokenRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:tokens:write');
    const body = c.req.valid('json');
    const expiresAt = tokenExpiry(body.ttl, new Date());
    const { db } = c.get('deps');
    // A pool it was only granted answers 403: joining machines into a pool is its owner's.
    const pool = await getOperablePool(db, body.poolId, principal);
    if (body.tenantId !== undefined && body.tenantId !== pool.tenantId) {
      throw new DrydockError(
        'INVALID_INPUT',
        `pool ${pool.id} belongs to ${pool.tenantId ?? 'no tenant'}, not ${body.tenantId}`,
      );
    }
    const { token, secret } = await createToken(db, {
      poolId: pool.id,
      tenantId: pool.tenantId,
      labels: body.labels ?? {},
      description: body.description ?? null,
      maxUses: body.maxUses,
      expiresAt,
      createdBy: actorOf(principal),
    });
    return c.json({ ...tokenView(token), secret }, 201);
  });

  router.openapi(listTokensRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:tokens:read');
    const { db } = c.get('deps');
    const rows = await listTokens(db, await managedPoolIds(db, principal));
    return c.json({ items: rows.map(tokenView) }, 200);
  });

  router.openapi(revokeTokenRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:tokens:write');
    const { db } = c.get('deps');
    const id = c.req.valid('param').id;
    const token = await revokeToken(db, id, await managedPoolIds(db, principal));
    return c.json(tokenView(token), 200);
  });

  return router;
}
