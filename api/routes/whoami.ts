import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { ACTIONS, may } from '../../domain/principal';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, json, PersonSchema } from '../schemas';

const CallerSchema = z
  .object({
    kind: z.enum(['operator', 'tenant']),
    name: z.string().openapi({
      description: "the key's name (recorded as key:<name>), or the person's email (user:<email>)",
    }),
    tenantId: z.string().nullable().openapi({ description: "a tenant key's tenant; null for operators" }),
    actions: z.array(z.enum(ACTIONS)).openapi({ description: 'the actions the key holds' }),
    person: PersonSchema.nullable(),
  })
  .openapi('Caller');

const whoamiRoute = createRoute({
  method: 'get',
  path: '/v1/whoami',
  operationId: 'whoami',
  tags: ['keys'],
  summary:
    'Who the caller is (a key, or a person signed in at the OpenID provider) and which actions it holds',
  responses: { 200: json(CallerSchema, 'the caller'), ...errorResponses },
});

/**
 * The caller's own key, or the person and what their groups grant: what a client (the console) needs to offer only the calls the key may
 * make. Reading it takes `compute:nodes:read`, like every other read.
 */
export function whoamiRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(whoamiRoute, (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read'); // node credentials are refused here
    const tenant = principal.kind === 'tenant' ? principal : null;
    return c.json(
      {
        kind: tenant ? ('tenant' as const) : ('operator' as const),
        name: principal.name,
        tenantId: tenant?.tenantId ?? null,
        actions: ACTIONS.filter((action) => may(principal, action)),
        person: principal.kind === 'node' ? null : (principal.person ?? null),
      },
      200,
    );
  });
  return router;
}
