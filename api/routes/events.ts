import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { eventView } from '../../db/queries/events';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { readEventFeed } from '../services/event-feed';
import { errorResponses, EventSchema, eventTypePrefixes, idOf, json, queryInteger } from '../schemas';

const feedRoute = createRoute({
  method: 'get',
  path: '/v1/events',
  operationId: 'listEvents',
  tags: ['events'],
  summary: 'The fleet-wide event feed, oldest first, with an optional long-poll',
  request: {
    query: z.strictObject({
      after: z
        .string()
        .regex(/^\d{1,15}$/, 'after is an event id: a nextCursor this feed handed out, or 0')
        .optional()
        .openapi({ description: 'the nextCursor of the previous page; absent or 0: from the first event' }),
      type: eventTypePrefixes.optional(),
      nodeId: idOf('node').optional().openapi({ description: "only this node's events" }),
      // 0 is no events: the answer is at once, and its nextCursor is where the feed stands now.
      limit: queryInteger(0, 200, 200).openapi({
        description: 'at most this many events; 0: none, only the nextCursor of now (to follow from)',
      }),
      wait: queryInteger(0, 30, 0),
    }),
  },
  responses: {
    200: json(
      z.object({
        items: z.array(EventSchema),
        nextCursor: z.string().openapi({ description: 'pass as after next time; never null' }),
      }),
      'events after the cursor (none when the wait ended first)',
    ),
    ...errorResponses,
  },
});

/** The fleet-wide event feed. */
export function eventsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(feedRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const q = c.req.valid('query');
    const { items, nextCursor } = await readEventFeed(c.get('deps'), principal, {
      afterId: Number(q.after ?? 0),
      typePrefixes: q.type,
      nodeId: q.nodeId,
      limit: q.limit,
      waitMs: q.wait * 1000,
      signal: c.req.raw.signal,
    });
    return c.json({ items: items.map(eventView), nextCursor: String(nextCursor) }, 200);
  });

  return router;
}
