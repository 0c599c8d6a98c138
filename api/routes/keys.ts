import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { DrydockError } from '../../domain/errors';
import { DEFAULT_ROTATION_GRACE_SECONDS, MAX_ROTATION_GRACE_SECONDS } from '../../domain/keys';
import { ACTIONS } from '../../domain/principal';
import { listKeys, type ApiKeyRow } from '../../db/queries/keys';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { createKey, revokeKey, rotateKey } from '../services/keys';
import { errorResponses, idOf, json, jsonBody, slug } from '../schemas';

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

function keyView(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    tenantId: k.tenantId,
    actions: k.actions,
    createdAt: k.createdAt.toISOString(),
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}

const createKeyRoute = createRoute({
  method: 'post',
  path: '/v1/keys',
  operationId: 'createKey',
  tags: ['keys'],
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
});

const listKeysRoute = createRoute({
  method: 'get',
  path: '/v1/keys',
  operationId: 'listKeys',
  tags: ['keys'],
  summary: 'List API keys (operator); secrets are never shown again',
  responses: { 200: json(z.object({ items: z.array(KeySchema) }), 'keys'), ...errorResponses },
});

const revokeKeyRoute = createRoute({
  method: 'delete',
  path: '/v1/keys/{id}',
  operationId: 'revokeKey',
  tags: ['keys'],
  summary: 'Revoke an API key (operator); it is refused from the next request on',
  request: { params: z.object({ id: idOf('key') }) },
  responses: { 200: json(KeySchema, 'the revoked key'), ...errorResponses },
});

const rotateKeyRoute = createRoute({
  method: 'post',
  path: '/v1/keys/{id}/rotate',
  operationId: 'rotateKey',
  tags: ['keys'],
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
});

/** API keys: operators create, list, revoke and rotate them. */
export function keysRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(createKeyRoute, async (c) => {
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
    const { key, secret } = await createKey(c.get('deps').db, {
      name: body.name,
      tenantId: body.tenantId ?? null,
      actions: [...new Set(body.actions ?? [])],
    });
    return c.json({ ...keyView(key), secret }, 201);
  });

  router.openapi(listKeysRoute, async (c) => {
    requireOperator(c.get('principal'));
    return c.json({ items: (await listKeys(c.get('deps').db)).map(keyView) }, 200);
  });

  router.openapi(revokeKeyRoute, async (c) => {
    requireOperator(c.get('principal'));
    const { db, apiKeys } = c.get('deps');
    const revoked = await revokeKey(db, c.req.valid('param').id);
    // This process's next request with it is refused; the trigger's NOTIFY tells the others.
    apiKeys.forget(revoked.id);
    return c.json(keyView(revoked), 200);
  });

  router.openapi(rotateKeyRoute, async (c) => {
    requireOperator(c.get('principal'));
    const id = c.req.valid('param').id;
    const graceSeconds = c.req.valid('json').graceSeconds ?? DEFAULT_ROTATION_GRACE_SECONDS;
    const { previous, key, secret } = await rotateKey(c.get('deps').db, id, graceSeconds);
    // Its grace's end is read again here at once (graceSeconds 0 ends it now).
    c.get('deps').apiKeys.forget(previous.id);
    return c.json({ ...keyView(key), secret, previous: keyView(previous) }, 201);
  });

  return router;
}
