import { z } from '@hono/zod-openapi';
import { ARTIFACT_ID, artifactPathFault, MAX_ARTIFACT_PATH } from '../domain/artifacts';
import { parseDeadline } from '../domain/deadline';
import { DURATION_PATTERN, parseDuration } from '../domain/duration';
import { DrydockError, ERROR_STATUS, type ErrorCode } from '../domain/errors';
import { EVENT_TYPES } from '../domain/events';
import { idPattern, SLUG_PATTERN, type IdPrefix } from '../domain/ids';
import { ACCESS, CONDITION_SOURCES, CONNECTIVITY, LIVENESS, PROVISION_STATES } from '../domain/node';
import { SOURCE_PATTERN } from '../domain/observed';
import { CONDITION_TYPE } from '../domain/remediation';
import { parseSelector, type Selector } from '../domain/selector';
import { ALLOCATION_KINDS, OPERATION_KINDS, OPERATION_STATUSES } from '../domain/operation';
import { TEXT_PATTERN, textFault } from '../domain/text';
import { EndingSchema, ProgressSchema } from './progress-schema';

/** A path or body id of the given form (docs/api.md, Identifiers). */
export const idOf = (prefix: IdPrefix) =>
  z
    .string()
    .regex(idPattern(prefix), `must look like ${prefix}_ followed by a 26-character lowercase ULID`)
    .openapi({ example: `${prefix}_01k5w8v3x9q2m4n6p8r0s2t4v6` });

export const slug = z.string().regex(SLUG_PATTERN, 'must be 1–63 of a-z 0-9 -, starting with a letter');

export const nodeIdParams = z.object({ id: idOf('node').openapi({ param: { name: 'id', in: 'path' } }) });

/**
 * A free-text field (domain/text.ts) of 1–`max` characters (UTF-16 code units). Too long is refused
 * before the characters are looked at.
 */
export const text = ({ max, description }: { max: number; description: string }) =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(max, { error: `is at most ${max} characters`, abort: true })
    .refine((value) => textFault(value) === null, { error: (issue) => textFault(issue.input as string) })
    .openapi({
      pattern: TEXT_PATTERN.source,
      description: `${description}; free text: no control characters (U+0000–U+001F, U+007F–U+009F), no format characters that hide or reorder text (bidi controls, zero-width and tag characters; U+200C and U+200D allowed), no lone surrogates`,
    });

export const reason = text({ max: 256, description: 'why, recorded on the event' });

/**
 * A duration in a body (`15m`, `1h`) read in ms, within `bounds`; `words` say the bounds and the
 * form when it is refused (`{ min: '1m', max: '1h', form: '15m or 1h' }`).
 */
export const boundedDuration = (
  bounds: { min: number; max: number },
  words: { min: string; max: string; form: string },
) =>
  z
    .string()
    .regex(DURATION_PATTERN, `a duration such as ${words.form}`)
    .transform((value) => parseDuration(value)!)
    .pipe(z.number().min(bounds.min, `is at least ${words.min}`).max(bounds.max, `is at most ${words.max}`));

/** An artifact's id as the storage layer names it (domain/artifacts.ts). */
export const artifactId = z
  .string()
  .max(128, { error: 'is at most 128 characters', abort: true })
  .regex(
    ARTIFACT_ID,
    'an artifact id is 1–128 of letters, digits and . _ : -, starting with a letter or digit',
  )
  .openapi({ example: 'llama-3.1-70b' });

/**
 * Where a copy of an artifact lives on its node: free text, and an absolute path whose segments are
 * neither empty nor `.` or `..` (domain/artifacts.ts).
 */
export const artifactPath = text({
  max: MAX_ARTIFACT_PATH,
  description: 'where the copy lives on the node: an absolute path, no empty, . or .. segment',
})
  .refine((path) => artifactPathFault(path) === null, {
    error: (issue) => artifactPathFault(issue.input as string),
  })
  .openapi({ example: '/data/models/llama-3.1-70b' });

/** A scheduler that places work on nodes: `<scheduler>:<cluster>` (domain/observed.ts). */
export const schedulerSource = z
  .string()
  .regex(SOURCE_PATTERN, 'source is <scheduler>:<cluster>, e.g. slurm:hpc1');

/** A condition type, as agents report them (`GpuXidError`). */
export const conditionType = z
  .string()
  .regex(CONDITION_TYPE, 'a condition type such as GpuXidError: a letter, then letters and digits');

/** A drain deadline as the caller writes it: an RFC 3339 time or a duration (domain/deadline.ts). */
export const deadlineText = (description: string) =>
  z
    .string()
    .max(64, { error: 'is at most 64 characters', abort: true })
    .refine((text) => 'deadline' in parseDeadline(text, Date.now()), {
      error: (issue) => {
        const parsed = parseDeadline(issue.input as string, Date.now());
        return 'problem' in parsed ? parsed.problem : 'is not a deadline';
      },
    })
    .openapi({ description, example: '2h' });

/**
 * A JSON object of `key` → `value`. zod passes over a `__proto__` key without a word (the entry
 * just vanishes); here it is refused like any other key of the wrong form.
 */
export const record = <K extends z.core.$ZodRecordKey, V extends z.ZodType>(key: K, value: V) =>
  z.preprocess(
    (input, ctx) => {
      if (input !== null && typeof input === 'object' && Object.hasOwn(input, '__proto__')) {
        ctx.addIssue({
          code: 'custom',
          message: '__proto__ is not a key this object takes',
          path: ['__proto__'],
        });
      }
      return input;
    },
    z.record(key, value),
  );

/** A label selector as the caller writes it (domain/selector.ts): `rack=b7,gpu.model=H100`. */
export const labelSelector = z
  .string()
  .max(4096, { error: 'is at most 4096 characters', abort: true })
  .refine((text) => 'selector' in parseSelector(text), {
    error: (issue) => {
      const parsed = parseSelector(issue.input as string);
      return 'problem' in parsed ? parsed.problem : 'is not a label selector';
    },
  })
  .openapi({
    description:
      'label selector KEY=VALUE[,KEY=VALUE…], e.g. `rack=b7,gpu.model=H100`: the nodes carrying all of these labels; every node when absent',
    example: 'rack=b7,gpu.model=H100',
  });

/** The selector of a `labelSelector` the schema passed; INVALID_INPUT should it not parse. */
export function selectorOf(text: string): Selector {
  const parsed = parseSelector(text);
  if (!('selector' in parsed)) throw new DrydockError('INVALID_INPUT', `selector ${parsed.problem}`);
  return parsed.selector;
}

/** A positive counter Postgres stores as `integer`: versions, generations. */
export const counter = z.number().int().positive().max(2_147_483_647);

export const version = counter.openapi({ description: 'the node version the caller read' });

/** Body of a plain node mutation. */
export const mutationBody = z.strictObject({ reason: reason.optional(), version: version.optional() });

/** What every route does with input its schemas refuse: INVALID_INPUT, naming each issue. */
export function refuseInvalid(result: {
  success: boolean;
  target: string;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}): void {
  if (result.success) return;
  const issues = result.error!.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const where = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  throw new DrydockError('INVALID_INPUT', `invalid ${result.target}: ${where}`, { issues });
}

/** `If-Match`: the version of the `thing` the caller read (optimistic concurrency), `"7"` or `7`. */
export const ifMatchHeadersOf = (thing: 'node' | 'pool') =>
  z.object({
    'if-match': z
      .string()
      .regex(/^(?:"\d{1,9}"|\d{1,9})$/, `If-Match carries the ${thing} version, "7" or 7`)
      .transform((value) => Number(value.replaceAll('"', '')))
      .optional()
      .openapi({ description: `the ${thing} version the caller read (optimistic concurrency)` }),
  });

export const ifMatchHeaders = ifMatchHeadersOf('node');

export const idempotencyKey = z
  .string({ error: 'Idempotency-Key is required' })
  .regex(/^[A-Za-z0-9._:-]{8,128}$/, 'Idempotency-Key is 8–128 of letters, digits and . _ : -')
  .openapi({ description: 'makes a retried request return the stored operation' });

/** The optional Idempotency-Key of a start without a node version (purge, remediation). */
export const idempotencyKeyHeaders = z.object({ 'idempotency-key': idempotencyKey.optional() });

export const idempotencyHeaders = ifMatchHeaders.extend(idempotencyKeyHeaders.shape);

/**
 * A number in the query: decimal digits only (no sign, exponent, hex, spaces or fraction), read as
 * an integer from `min` to `max`.
 */
export const queryInteger = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `must be a decimal integer from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min).max(max))
    .default(fallback)
    .openapi({
      type: 'integer',
      minimum: min,
      maximum: max,
      default: fallback,
      description: 'decimal digits only',
    });

export const limit = (max: number, fallback: number) => queryInteger(1, max, fallback);

/** The opaque cursor a listing handed out (base64url). */
export const cursor = z.string().regex(/^[A-Za-z0-9_-]{1,1000}$/, 'cursor is one a listing handed out');
/**
 * Event types or prefixes of them (`node.`, `node.drain`, `node.drained`), up to 10 separated by
 * commas (`node.,allocation.end-requested`), as both feeds filter by: an event of any of them.
 */
export const eventTypePrefixes = z
  .string()
  .regex(
    /^[a-z][a-z0-9.-]{0,99}(,[a-z][a-z0-9.-]{0,99}){0,9}$/,
    'type is an event type prefix such as node. or node.drained, or up to 10 of them separated by commas',
  )
  .transform((v) => v.split(','))
  .openapi({
    description: 'an event type or a prefix of one, or up to 10 separated by commas: events of any of them',
  });
export const booleanString = z.enum(['true', 'false']).transform((v) => v === 'true');

/** The one error envelope (api/errors.ts), referred to by every error response. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
      requestId: z.string(),
    }),
  })
  .openapi('Error');

export const SchedulerViewSchema = z
  .object({
    source: z
      .string()
      .openapi({ description: 'the scheduler: `<scheduler>:<cluster>`', example: 'slurm:hpc1' }),
    name: z.string().openapi({ description: "the node's name in the scheduler" }),
    state: z.string().openapi({ description: "the scheduler's words for its state", example: 'mixed+drain' }),
    reason: z.string().nullable().openapi({ description: "the scheduler's reason for that state" }),
    cordoned: z.boolean().openapi({ description: 'the scheduler places no new work there' }),
    cordonedByDrydock: z.boolean().openapi({ description: "that cordon is Drydock's, set by the bridge" }),
    down: z.boolean().openapi({
      description:
        'the scheduler marks it down, failed or not responding (the node carries SchedulerNodeDown; SchedulerNodeNotReady for kubernetes:<cluster>)',
    }),
    disagreement: z
      .string()
      .nullable()
      .openapi({ description: 'where the scheduler and Drydock disagree, in words; null when they agree' }),
    observedAt: z.string().openapi({ description: 'when its bridge last reported it' }),
    changedAt: z.string().openapi({ description: 'when its bridge last reported it otherwise than before' }),
  })
  .openapi('SchedulerView');

export const NodeSchema = z
  .object({
    id: z.string(),
    tenantId: z.string().nullable(),
    poolId: z.string().nullable(),
    siteId: z.string().nullable(),
    requestedPoolId: z.string().nullable().openapi({
      description:
        'the pool a node that joined without a token asked for: approving it without a poolId puts it there; null when it asked for none or joined with a token',
    }),
    hostname: z.string(),
    displayName: z.string().nullable(),
    provisionState: z.enum(PROVISION_STATES),
    access: z.enum(ACCESS),
    cordoned: z.boolean(),
    maintenance: z.boolean(),
    noScheduleReasons: z.array(z.string()),
    connectivity: z.enum(CONNECTIVITY),
    liveness: z.enum(LIVENESS),
    lastSeenAt: z.string().nullable(),
    bootId: z.string().nullable().openapi({
      description:
        "the machine's boot id as its agent said it at its latest session start: a reboot is a new one",
    }),
    bootedAt: z.string().nullable().openapi({ description: 'when that boot began' }),
    labels: z.array(z.object({ key: z.string(), value: z.string(), source: z.string() })),
    conditions: z.array(
      z.object({
        type: z.string(),
        status: z.boolean(),
        reason: z.string().nullable(),
        since: z.string(),
        source: z.enum(CONDITION_SOURCES).optional().openapi({
          description:
            "operator: set by an operator (recorded true, or cleared by hand); scheduler: set by a scheduler's view of the node (SchedulerNodeDown, or SchedulerNodeNotReady for kubernetes:<cluster>); absent: reported by the agent",
        }),
      }),
    ),
    session: z.object({ connectivity: z.enum(CONNECTIVITY), lastSeenAt: z.string().nullable() }),
    identityGeneration: z.number(),
    version: z.number(),
    createdAt: z.string(),
    updatedAt: z.string(),
    deletedAt: z.string().nullable(),
    schedulers: z.array(SchedulerViewSchema).openapi({
      description: 'what each scheduler placing work there says of it, by source; empty when none reports',
    }),
  })
  .openapi('Node');

export const OperationSchema = z
  .object({
    id: z.string(),
    kind: z.enum(OPERATION_KINDS),
    nodeId: z.string().nullable(),
    poolId: z.string().nullable(),
    parentOperationId: z
      .string()
      .nullable()
      .openapi({ description: 'the pool drain a node drain belongs to; null for any other operation' }),
    status: z.enum(OPERATION_STATUSES),
    workflowId: z.string(),
    actor: z.string(),
    reason: z.string().nullable(),
    idempotencyKey: z.string().nullable(),
    progress: ProgressSchema,
    result: z.record(z.string(), z.unknown()).nullable(),
    error: z.record(z.string(), z.unknown()).nullable(),
    /** Who asked to cancel it (DELETE /v1/operations/{id}), and how; null when nobody did. */
    cancellation: z
      .object({
        by: z.string(),
        reason: z.string().nullable(),
        at: z.string(),
        children: z.enum(['finish', 'cancel']).optional(),
      })
      .nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    completedAt: z.string().nullable(),
  })
  .openapi('Operation');

/** The answer of a request that names the node too (drain, purge). */
export const NodeOperationSchema = z.object({ node: NodeSchema, operation: OperationSchema });

/** What a route that requests an operation answers: 202 when this request recorded it, else 200. */
export const startResponses = <T extends z.ZodType>(schema: T, began: string, found: string) => ({
  202: json(schema, began),
  200: json(schema, found),
  ...errorResponses,
});

export const AllocationSchema = z
  .object({
    id: z.string(),
    nodeId: z.string(),
    tenantId: z.string(),
    kind: z.enum(ALLOCATION_KINDS),
    createdAt: z.string(),
    endsAt: z.string().nullable(),
    releasedAt: z.string().nullable(),
    releasedBy: z.string().nullable().openapi({ description: 'who released it: key:<name>, or null' }),
    source: z.string().nullable().openapi({
      description: 'observed: the scheduler that placed it (`slurm:<cluster>`); null: placed here',
    }),
    externalId: z.string().nullable().openapi({ description: "observed: the scheduler's id of the work" }),
    endRequestedAt: z.string().nullable().openapi({
      description:
        "observed: when a drain's deadline asked its scheduler to end it (allocation.end-requested)",
    }),
    ending: EndingSchema.nullable().openapi({
      description:
        'observed, asked to end (politely while its node drains, or at the deadline): what its scheduler answered (its bridge says); null before any answer',
    }),
    live: z.boolean().openapi({ description: 'still holds its node: not released and not past endsAt' }),
  })
  .openapi('Allocation');

export const ArtifactCopySchema = z
  .object({
    id: z.string(),
    artifactId: z.string(),
    nodeId: z.string(),
    path: z.string(),
    createdAt: z.string().openapi({ description: 'when the copy was recorded there' }),
    removedAt: z.string().nullable().openapi({ description: 'when it was removed; null while it is live' }),
  })
  .openapi('ArtifactCopy');

/** A person as the OpenID provider knows them: the provider, their stable subject there, their email. */
export const PersonSchema = z
  .object({
    issuer: z.string().openapi({ description: "the OpenID provider's issuer URL" }),
    subject: z.string().openapi({ description: "the person's subject at the provider (the token's sub)" }),
    email: z.string().nullable().openapi({ description: "the token's email claim, when it has one" }),
  })
  .openapi('Person');

export const EventSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().nullable(),
    tenantId: z.string().nullable(),
    // Documented as the types Drydock writes (domain/events.ts); read as the string it is stored as.
    type: z.string().openapi({ enum: EVENT_TYPES }),
    actor: z.string(),
    reason: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
    operationId: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi('Event');

/**
 * The error responses of every route, by status, each one shared component of the document
 * (components.responses, registered in api/openapi.ts) carrying the one envelope.
 */
export const ERROR_RESPONSES = {
  400: { name: 'InvalidInput', description: 'INVALID_INPUT: a body, query, header or path fails its schema' },
  401: { name: 'Unauthenticated', description: 'UNAUTHENTICATED: no valid bearer credential' },
  403: { name: 'Forbidden', description: "FORBIDDEN: the caller lacks the route's action or role" },
  404: { name: 'NotFound', description: 'NOT_FOUND: no such thing, or not visible to the caller' },
  409: {
    name: 'Conflict',
    description: 'CONFLICT (a version no longer matches), INVALID_STATE or NOT_SCHEDULABLE',
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'PAYLOAD_TOO_LARGE: a request body over 64 KiB; the connection closes after the answer',
  },
  422: {
    name: 'IdempotencyKeyReused',
    description: 'IDEMPOTENCY_KEY_REUSED: the same Idempotency-Key with a different request',
  },
  429: {
    name: 'RateLimited',
    description:
      'RATE_LIMITED: too many failed authentications or token-less joins from one address; see Retry-After',
  },
  503: {
    name: 'Unavailable',
    description:
      'UNAVAILABLE: Postgres could not complete the request; the message says whether anything changed',
  },
} as const;

export const errorResponses = Object.fromEntries(
  Object.entries(ERROR_RESPONSES).map(([status, { name }]) => [
    status,
    { $ref: `#/components/responses/${name}` },
  ]),
);

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T, required = false) => ({
  body: { content: { 'application/json': { schema } }, required },
});

/** The version a mutation expects: body `version` or `If-Match`; both must agree. */
export function expectedVersion(
  bodyVersion: number | undefined,
  header: number | undefined,
): number | undefined {
  if (bodyVersion !== undefined && header !== undefined && bodyVersion !== header) {
    throw new DrydockError('INVALID_INPUT', `body version ${bodyVersion} and If-Match ${header} disagree`);
  }
  return bodyVersion ?? header;
}
