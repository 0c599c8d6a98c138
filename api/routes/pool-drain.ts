import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { parseDeadline } from '../../domain/deadline';
import { DrydockError } from '../../domain/errors';
import { formatSelector } from '../../domain/selector';
import { getOperablePool } from '../../db/queries/pools';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  deadlineText,
  idempotencyKeyHeaders,
  jsonBody,
  labelSelector,
  OperationSchema,
  reason,
  selectorOf,
  slug,
  startResponses,
} from '../schemas';
import { drainPool } from '../services/requests';

/** How many node drains a pool drain runs at once unless told. */
export const DEFAULT_MAX_CONCURRENT = 1;

const deadline = deadlineText(
  'when a node drain force-releases what is still live: an RFC 3339 time (the same for every node) ' +
    'or a duration such as 2h (counted from each node’s own drain start)',
);

const poolDrainBody = z.strictObject({
  selector: labelSelector.optional(),
  maxConcurrent: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .openapi({ description: `node drains at once, 1–1000 (default ${DEFAULT_MAX_CONCURRENT})` }),
  deadline: deadline.optional(),
  reason,
});

const poolDrainRoute = createRoute({
  method: 'post',
  path: '/v1/pools/{id}/drain',
  operationId: 'drainPool',
  tags: ['drain'],
  summary: 'Drain the nodes of a pool that match a selector, a few at a time (workflow pool-drain/<poolId>)',
  request: {
    params: z.object({ id: slug }),
    headers: idempotencyKeyHeaders,
    ...jsonBody(poolDrainBody, true),
  },
  responses: startResponses(
    z.object({ operation: OperationSchema }),
    'the pool drain began',
    'the pool drain already runs',
  ),
});

export function poolDrainRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(poolDrainRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:drain');
    const deps = c.get('deps');
    const body = c.req.valid('json');
    const selector = selectorOf(body.selector ?? '');
    const parsedDeadline = body.deadline === undefined ? null : parseDeadline(body.deadline, Date.now());
    // Checked by the schema a moment ago; a time that passed since is refused the same way.
    if (parsedDeadline && !('deadline' in parsedDeadline)) {
      throw new DrydockError('INVALID_INPUT', `deadline ${parsedDeadline.problem}`);
    }
    const pool = await getOperablePool(deps.db, c.req.valid('param').id, principal);
    const maxConcurrent = body.maxConcurrent ?? DEFAULT_MAX_CONCURRENT;
    const result = await drainPool(deps, pool, {
      principal,
      reason: body.reason,
      selector,
      maxConcurrent,
      deadline: parsedDeadline?.deadline ?? null,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      binds: {
        selector: formatSelector(selector),
        maxConcurrent,
        deadline: body.deadline,
        reason: body.reason,
      },
    });
    return c.json({ operation: result.operation }, result.created ? 202 : 200);
  });
  return router;
}
