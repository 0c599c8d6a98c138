import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { DrydockError } from '../../domain/errors';
import { requireOperator } from '../auth';
import type { AppEnv } from '../env';
import { auditActor, readAudit } from '../services/audit';
import { errorResponses, EventSchema, eventTypePrefixes, json, PersonSchema, queryInteger } from '../schemas';

const eventId = (what: string) =>
  z
    .string()
    .regex(/^\d{1,15}$/, `${what} is an event id: a nextCursor the audit handed out`)
    .optional();

const AuditEntrySchema = EventSchema.extend({
  description: z.string().nullable().openapi({
    description: "the event type's one-line description (null for a type this API does not know)",
  }),
  hostname: z.string().nullable().openapi({ description: "the event's node's hostname, as it is now" }),
  poolId: z
    .string()
    .nullable()
    .openapi({ description: "the pool the event names in its data, else its node's pool as it is now" }),
  person: PersonSchema.nullable(),
}).openapi('AuditEntry');

const auditRoute = createRoute({
  method: 'get',
  path: '/v1/audit',
  operationId: 'listAudit',
  tags: ['events'],
  summary: 'Who did what, when and why: the events, newest first, or followed oldest first (operators only)',
  request: {
    query: z.strictObject({
      actor: z
        .string()
        .regex(
          /^[\x21-\x2B\x2D-\x7E]{1,200}$/,
          'actor is an actor such as key:ops, node:n_… or alice@example.com',
        )
        .optional()
        .openapi({
          description:
            'only the events of this actor, exactly (key:ops, node:n_…, system:drain); without a colon a person: alice@example.com is user:alice@example.com',
        }),
      type: eventTypePrefixes.optional(),
      since: z.iso
        .datetime({ offset: true })
        .optional()
        .openapi({ description: 'only events at or after this time (RFC 3339)' }),
      until: z.iso
        .datetime({ offset: true })
        .optional()
        .openapi({ description: 'only events before this time (RFC 3339)' }),
      cursor: eventId('cursor').openapi({
        description: 'newest first: the nextCursor of the previous page, for older events',
      }),
      after: eventId('after').openapi({
        description:
          'follow: oldest first, the events after this cursor (0: from the first); with wait, a long-poll',
      }),
      limit: queryInteger(0, 200, 50),
      wait: queryInteger(0, 30, 0).openapi({
        description: 'with after only: seconds to wait for a new entry',
      }),
    }),
  },
  responses: {
    200: json(
      z.object({
        items: z.array(AuditEntrySchema),
        nextCursor: z.string().nullable().openapi({
          description:
            'newest first: pass as cursor for older events, null on the last page; with after: pass as after, never null',
        }),
      }),
      'audit entries',
    ),
    ...errorResponses,
  },
});

/** The audit: the events table read by who did what, for operators. */
export function auditRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(auditRoute, async (c) => {
    const principal = c.get('principal');
    requireOperator(principal);
    const q = c.req.valid('query');
    if (q.cursor !== undefined && q.after !== undefined) {
      throw new DrydockError(
        'INVALID_INPUT',
        'cursor pages back (newest first), after follows (oldest first): send one',
        {
          query: ['cursor', 'after'],
        },
      );
    }
    if (q.wait > 0 && q.after === undefined) {
      throw new DrydockError(
        'INVALID_INPUT',
        'wait follows new entries: it needs after (0 for the first entry)',
        {
          query: ['wait'],
        },
      );
    }
    const filters = {
      actor: q.actor === undefined ? undefined : auditActor(q.actor),
      typePrefixes: q.type,
      since: q.since === undefined ? undefined : new Date(q.since),
      until: q.until === undefined ? undefined : new Date(q.until),
      limit: q.limit,
    };
    const page = await readAudit(
      c.get('deps'),
      principal,
      q.after === undefined
        ? { ...filters, direction: 'newest', beforeId: q.cursor === undefined ? undefined : Number(q.cursor) }
        : {
            ...filters,
            direction: 'follow',
            afterId: Number(q.after),
            waitMs: q.wait * 1000,
            signal: c.req.raw.signal,
          },
    );
    return c.json(page, 200);
  });

  return router;
}
