import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { DEFAULT_ROTATION_GRACE_SECONDS, MAX_ROTATION_GRACE_SECONDS } from '../../domain/keys';
import { ACTIONS } from '../../domain/principal';
import { apiKeys } from '../../db/schema';
import { hashSecret, newSecret } from '../../domain/secrets';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, idOf, json, jsonBody, slug } from '../schemas';

export const keysRouter = new OpenAPIHono<AppEnv>();

const KeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    tenantId: z.string().nullable(),
    actions: z.array(z.string()),
    createdAt: z.string(),
    revokedAt: z.string().nullable().openapi({
      description: 'when the key stops (or stopped) being accepted; later than now during a rotation grace',
    }),
  })
  .openapi('ApiKey');

function keyView(k: typeof apiKeys.$inferSelect) {
  return {
    id: k.id,
    name: k.name,
    tenantId: k.tenantId,
    actions: k.actions,
    createdAt: k.createdAt.toISOString(),
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}

keysRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/keys',
    summary: 'Create an API key (operator); a key without tenantId is an operator key',
    request: jsonBody(
      z.strictObject({
        name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, '1–63 of a-z 0-9 . _ -'),
        tenantId: slug.optional(),
        actions: z.array(z.enum(ACTIONS)).max(ACTIONS.length).optional(),
      }),
      true,
    ),
    responses: {
      201: json(KeySchema.extend({ secret: z.string() }), 'the key and its secret, shown once'),
      ...errorResponses,
    },
  }),
  async (c) => {
    requireOperator(c.get('principal'));
    const body = c.req.valid('json');
    if (!body.tenantId && body.actions?.length) {
      throw new DrydockError(
        'INVALID_INPUT',
        'an operator key (no tenantId) holds every action; omit actions',
      );
    }
    if (body.tenantId && !body.actions?.length) {
      throw new DrydockError('INVALID_INPUT', 'a tenant key needs at least one action');
    }
    const secret = newSecret('ddk');
    const [key] = await c
      .get('deps')
      .db.insert(apiKeys)
      .values({
        id: newId('key'),
        name: body.name,
        tenantId: body.tenantId ?? null,
        actions: [...new Set(body.actions ?? [])],
        secretHash: hashSecret(secret),
      })
      .returning();
    return c.json({ ...keyView(key!), secret }, 201);
  },
);

keysRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/keys',
    summary: 'List API keys (operator); secrets are never shown again',
    responses: { 200: json(z.object({ items: z.array(KeySchema) }), 'keys'), ...errorResponses },
  }),
  async (c) => {
    requireOperator(c.get('principal'));
    const rows = await c.get('deps').db.select().from(apiKeys).orderBy(asc(apiKeys.id));
    return c.json({ items: rows.map(keyView) }, 200);
  },
);

keysRouter.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/keys/{id}',
    summary: 'Revoke an API key (operator); it is refused from the next request on',
    request: { params: z.object({ id: idOf('key') }) },
    responses: { 200: json(KeySchema, 'the revoked key'), ...errorResponses },
  }),
  async (c) => {
    requireOperator(c.get('principal'));
    const id = c.req.valid('param').id;
    const { db } = c.get('deps');
    // A key still in a rotation grace is accepted until then: revoking it ends the grace now.
    const [revoked] = await db
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.revokedAt), gt(apiKeys.revokedAt, sql`now()`))))
      .returning();
    const [key] = revoked ? [revoked] : await db.select().from(apiKeys).where(eq(apiKeys.id, id));
    if (!key) throw new DrydockError('NOT_FOUND', `key ${id} not found`, { keyId: id });
    return c.json(keyView(key), 200);
  },
);

keysRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/keys/{id}/rotate',
    summary:
      'Rotate an API key (operator): a new key with the same tenant and actions and a new secret, shown once; the old secret keeps working for graceSeconds',
    request: {
      params: z.object({ id: idOf('key') }),
      ...jsonBody(
        z.strictObject({
          graceSeconds: z
            .number()
            .int()
            .min(0)
            .max(MAX_ROTATION_GRACE_SECONDS)
            .optional()
            .openapi({
              description: `how long the old secret stays accepted (default ${DEFAULT_ROTATION_GRACE_SECONDS}; 0 ends it at once)`,
            }),
        }),
      ),
    },
    responses: {
      201: json(
        KeySchema.extend({ secret: z.string(), previous: KeySchema }),
        'the new key and its secret, shown once; `previous` is the old key, accepted until its revokedAt',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    requireOperator(c.get('principal'));
    const id = c.req.valid('param').id;
    const graceSeconds = c.req.valid('json').graceSeconds ?? DEFAULT_ROTATION_GRACE_SECONDS;
    const secret = newSecret('ddk');
    const { previous, key } = await c.get('deps').db.transaction(async (tx) => {
      // The row lock makes concurrent rotations of one key take turns: only the first finds it live.
      const [old] = await tx
        .update(apiKeys)
        .set({ revokedAt: sql`now() + make_interval(secs => ${graceSeconds})` })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning();
      if (!old) {
        const [existing] = await tx.select().from(apiKeys).where(eq(apiKeys.id, id));
        if (!existing) throw new DrydockError('NOT_FOUND', `key ${id} not found`, { keyId: id });
        throw new DrydockError(
          'INVALID_STATE',
          `key ${id} was already rotated or revoked (revokedAt ${existing.revokedAt!.toISOString()}); rotate its successor`,
          { keyId: id, revokedAt: existing.revokedAt!.toISOString() },
        );
      }
      const [created] = await tx
        .insert(apiKeys)
        .values({
          id: newId('key'),
          name: old.name,
          tenantId: old.tenantId,
          actions: old.actions,
          secretHash: hashSecret(secret),
        })
        .returning();
      return { previous: old, key: created! };
    });
    return c.json({ ...keyView(key), secret, previous: keyView(previous) }, 201);
  },
);
