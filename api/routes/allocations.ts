import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { ENDING_ACTIONS, EXTERNAL_ID_PATTERN } from '../../domain/observed';
import { ALLOCATION_KINDS } from '../../domain/operation';
import { allocationView } from '../../db/queries/allocations';
import { may } from '../../domain/principal';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  AllocationSchema,
  errorResponses,
  idOf,
  json,
  jsonBody,
  schedulerSource,
  slug,
  text,
} from '../schemas';
import { observeAllocation, placeAllocation, recordEnding, releaseAllocation } from '../services/allocations';

const placeRoute = createRoute({
  method: 'post',
  path: '/v1/allocations',
  operationId: 'placeAllocation',
  tags: ['allocations'],
  summary:
    'Place an allocation on a node (refused unless placement accepts it), or record one a scheduler placed (source, externalId)',
  request: jsonBody(
    z
      .strictObject({
        nodeId: idOf('node'),
        tenantId: slug,
        kind: z.enum(ALLOCATION_KINDS),
        endsAt: z.iso.datetime({ offset: true }).optional(),
        source: schedulerSource.optional().openapi({
          description:
            "observed: the scheduler that placed the work (`<scheduler>:<cluster>`); takes compute:allocations:observe, and placement's refusals are recorded, not applied",
        }),
        externalId: z
          .string()
          .regex(
            EXTERNAL_ID_PATTERN,
            "externalId is the scheduler's id of the work: 1–253 of letters, digits and . _ : + / -",
          )
          .optional()
          .openapi({
            description: "the scheduler's own id of the work (a job id, a pod's namespace/name/uid)",
          }),
      })
      .refine((body) => (body.source === undefined) === (body.externalId === undefined), {
        message: 'source and externalId come together',
        path: ['externalId'],
      }),
    true,
  ),
  responses: {
    200: json(AllocationSchema, 'the observed allocation, recorded before'),
    201: json(AllocationSchema, 'the allocation'),
    ...errorResponses,
  },
});

const releaseRoute = createRoute({
  method: 'post',
  path: '/v1/allocations/{id}/release',
  operationId: 'releaseAllocation',
  tags: ['allocations'],
  summary: 'Release an allocation; a drain waiting on its node wakes at once',
  request: { params: z.object({ id: idOf('alloc') }) },
  responses: { 200: json(AllocationSchema, 'the released allocation'), ...errorResponses },
});

const endingRoute = createRoute({
  method: 'post',
  path: '/v1/allocations/{id}/ending',
  operationId: 'recordAllocationEnding',
  tags: ['allocations'],
  summary:
    "Record what a scheduler answered when asked to end observed work (a bridge), on a draining node or once a drain's deadline asked; the node's drain shows it",
  request: {
    params: z.object({ id: idOf('alloc') }),
    ...jsonBody(
      z.strictObject({
        action: z.enum(ENDING_ACTIONS).openapi({
          description:
            "how the scheduler ends it: requeue (back in its queue), cancel (for good), evict (asked politely, as its own disruption budget allows: on a draining node from the drain's start) or delete (at once)",
        }),
        answer: text({ max: 500, description: 'what the scheduler said' }),
      }),
      true,
    ),
  },
  responses: {
    200: json(AllocationSchema, 'the allocation with its ending (the same answer again moves only its at)'),
    ...errorResponses,
  },
});

/** Placement and release of allocations (tenant keys act for their own tenant). */
export function allocationsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(placeRoute, async (c) => {
    const principal = c.get('principal');
    const { source, externalId, ...body } = c.req.valid('json');
    const endsAt = body.endsAt ? new Date(body.endsAt) : null;
    if (source !== undefined && externalId !== undefined) {
      requireAction(principal, 'compute:allocations:observe');
      const observed = await observeAllocation(c.get('deps'), principal, {
        ...body,
        endsAt,
        source,
        externalId,
      });
      return c.json(allocationView(observed.allocation, true), observed.created ? 201 : 200);
    }
    requireAction(principal, 'compute:allocations:write');
    const created = await placeAllocation(c.get('deps'), principal, { ...body, endsAt });
    // Placement refuses an endsAt that is not in the future, so a new allocation is live.
    return c.json(allocationView(created, true), 201);
  });

  router.openapi(releaseRoute, async (c) => {
    const principal = c.get('principal');
    // A bridge's key (compute:allocations:observe) releases the work its scheduler ended.
    const observedOnly = principal.kind === 'tenant' && !may(principal, 'compute:allocations:write');
    requireAction(principal, observedOnly ? 'compute:allocations:observe' : 'compute:allocations:write');
    const released = await releaseAllocation(c.get('deps'), principal, c.req.valid('param').id, observedOnly);
    return c.json(allocationView(released, false), 200);
  });

  router.openapi(endingRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:allocations:observe');
    const recorded = await recordEnding(
      c.get('deps'),
      principal,
      c.req.valid('param').id,
      c.req.valid('json'),
    );
    return c.json(allocationView(recorded.allocation, recorded.live), 200);
  });
  return router;
}
