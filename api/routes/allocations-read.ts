import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { idPattern } from '../../domain/ids';
import { EXTERNAL_ID_PATTERN } from '../../domain/observed';
import { getVisibleAllocation, listAllocations } from '../../db/queries/allocations';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  AllocationSchema,
  booleanString,
  cursor,
  errorResponses,
  idOf,
  json,
  limit,
  schedulerSource,
  slug,
} from '../schemas';

const listRoute = createRoute({
  method: 'get',
  path: '/v1/allocations',
  operationId: 'listAllocations',
  tags: ['allocations'],
  summary: 'List allocations, oldest first; live=true: what still holds its node (what blocks a drain)',
  request: {
    query: z.strictObject({
      nodeId: idOf('node').optional(),
      tenantId: slug.optional(),
      source: schedulerSource.optional(),
      externalId: z
        .string()
        .regex(EXTERNAL_ID_PATTERN, "externalId is a scheduler's id of the work")
        .optional(),
      live: booleanString.optional(),
      limit: limit(500, 50),
      cursor: cursor.optional(),
    }),
  },
  responses: {
    200: json(
      z.object({ items: z.array(AllocationSchema), nextCursor: z.string().nullable() }),
      'a page of allocations',
    ),
    ...errorResponses,
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/v1/allocations/{id}',
  operationId: 'getAllocation',
  tags: ['allocations'],
  summary: 'Get an allocation',
  request: { params: z.object({ id: idOf('alloc') }) },
  responses: { 200: json(AllocationSchema, 'the allocation'), ...errorResponses },
});

/** Reading allocations: a tenant key sees its own tenant's only. */
export function allocationsReadRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(listRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const { cursor, limit, ...filter } = c.req.valid('query');
    const after = decodeCursor(cursor, idPattern('alloc'));
    const rows = await listAllocations(c.get('deps').db, principal, { ...filter, after, limit: limit + 1 });
    return c.json(
      page(rows, limit, (a) => a.id),
      200,
    );
  });

  router.openapi(getRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    return c.json(await getVisibleAllocation(c.get('deps').db, c.req.valid('param').id, principal), 200);
  });
  return router;
}
