import { z } from '@hono/zod-openapi';
import { MAX_CREDENTIAL_TTL_MS, MIN_CREDENTIAL_TTL_MS } from '../domain/credentials';
import { DURATION_PATTERN, parseDuration } from '../domain/duration';
import {
  ACTION_NAME,
  MAX_ATTEMPT_TIMEOUT_MS,
  MAX_HEALTHY_AFTER_MS,
  MAX_LADDER_RUNGS,
} from '../domain/remediation';
import type { PoolPolicy } from '../domain/pool';
import { conditionType, record, refuseInvalid, slug } from './schemas';

// A pool's grants and policy, as `POST /v1/pools` takes them whole and `PATCH /v1/pools/{id}` as a
// merge patch: each field is defined once, below, and both shapes are made from it.

export const POOL_KINDS = ['bare-metal', 'provider', 'vps-host', 'tenant-root'] as const;

/** The tenants besides the owner that may use the pool. */
export const grantsSchema = z.array(slug).max(64, 'at most 64 grants');

/** A count (`3`) or a percent string (`"40%"`). */
const countOrPercent = z.union([
  z.number().int().min(0).max(100_000),
  z.string().regex(/^(100|[1-9]?\d)%$/, 'a percent such as "40%"'),
]);

/** A node unreachable for longer than a month is long gone; a larger value is a typo. */
const MAX_LOST_AFTER_MS = 30 * 86_400_000;

/** A duration string (`10m`) within bounds: above 0 (or at least 0 when `zero` is allowed), at most `max`. */
function boundedDuration(name: string, bounds: { zero: boolean; maxMs: number; max: string }) {
  const floor = bounds.zero ? 'at least 0' : 'more than 0';
  return z
    .string()
    .max(32, { error: `${name} is at most 32 characters`, abort: true })
    .regex(DURATION_PATTERN, `${name} is a duration such as 10m`)
    .refine((v) => {
      const ms = parseDuration(v)!;
      return (bounds.zero ? ms >= 0 : ms > 0) && ms <= bounds.maxMs;
    }, `${name} is ${floor} and at most ${bounds.max}`);
}

/** One condition type's remediation: its ladder of actions, attempt timeout and healthyAfter. */
const conditionRemediationFields = {
  ladder: z
    .array(z.string().max(64).regex(ACTION_NAME, 'an action name such as reset-accelerator'))
    .min(1, 'a ladder has at least one action')
    .max(MAX_LADDER_RUNGS, `a ladder has at most ${MAX_LADDER_RUNGS} actions`)
    .openapi({
      description: 'the actions tried in order, one per attempt (default reset-accelerator, reboot)',
    }),
  attemptTimeout: boundedDuration('attemptTimeout', {
    zero: false,
    maxMs: MAX_ATTEMPT_TIMEOUT_MS,
    max: '24h',
  }).openapi({
    description:
      'how long one attempt waits for the condition to clear: more than 0, at most 24h (default 10m)',
  }),
  healthyAfter: boundedDuration('healthyAfter', {
    zero: true,
    maxMs: MAX_HEALTHY_AFTER_MS,
    max: '1h',
  }).openapi({
    description:
      'how long the condition must hold clear before the agent reports it cleared: 0 to 1h (default 60s)',
  }),
};

/** `policy.acceptance`: the action acceptance runs on a node, and how long its command waits. */
const acceptanceFields = {
  action: z.string().max(64).regex(ACTION_NAME, 'an action name such as acceptance').openapi({
    description:
      "an action configured on the node's agent that must exit 0 before the node is adopted (default: none, the node's own checks only)",
  }),
  expiresIn: boundedDuration('expiresIn', { zero: false, maxMs: 7 * 86_400_000, max: '7d' }).openapi({
    description:
      'how long the action waits for the agent to take it before it expires: at most 7d (default 1h)',
  }),
};

/** `policy.remediation`: per condition type, at most 64 of them. */
const perConditionType = <V extends z.ZodType>(value: V) =>
  record(conditionType, value)
    .refine((r) => Object.keys(r).length <= 64, 'at most 64 condition types')
    .openapi({ description: 'remediation per condition type (docs/lifecycle/remediation.md)' });

/** The policy's fields other than `remediation`. */
const policyFields = {
  lostAfter: boundedDuration('lostAfter', { zero: false, maxMs: MAX_LOST_AFTER_MS, max: '30d' }).openapi({
    description: 'how long an unreachable node stays before it is lost: more than 0, at most 30d',
  }),
  credentialTtl: z
    .string()
    .max(32, { error: 'credentialTtl is at most 32 characters', abort: true })
    .regex(DURATION_PATTERN, 'credentialTtl is a duration such as 24h')
    .refine((v) => {
      const ms = parseDuration(v)!;
      return ms >= MIN_CREDENTIAL_TTL_MS && ms <= MAX_CREDENTIAL_TTL_MS;
    }, 'credentialTtl is at least 10s and at most 30d')
    .openapi({
      description:
        'how long a node credential lives; the agent renews it two thirds in (default 24h, from 10s to 30d)',
    }),
  maxUnavailable: countOrPercent.openapi({
    description: 'the disruption budget: nodes out at once for drains, a count or a percent (default 1)',
  }),
  maxUnhealthy: countOrPercent.openapi({
    description:
      'the storm limit: nodes unhealthy or in remediation at once, a count or a percent (default "40%")',
  }),
};

type Shape = Record<string, z.ZodType>;

/** Every field of `shape` optional and nullable: `null` removes it (a merge patch, RFC 7396). */
function removable<S extends Shape>(shape: S) {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => [key, field.nullable().optional()]),
  ) as {
    [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>>;
  };
}

/** A pool's policy, whole: what is not set takes its default. */
export const policySchema = z
  .strictObject({
    ...policyFields,
    remediation: perConditionType(z.strictObject(conditionRemediationFields).partial()),
    acceptance: z
      .strictObject(acceptanceFields)
      .partial()
      .openapi({ description: 'what acceptance runs (docs/lifecycle/enrollment.md#acceptance)' }),
  })
  .partial();

/** A merge patch of a pool's policy: a field present is set, `null` removes it, absent is kept. */
export const policyPatchSchema = z.strictObject({
  ...removable(policyFields),
  remediation: perConditionType(z.strictObject(removable(conditionRemediationFields)).nullable())
    .nullable()
    .optional(),
  acceptance: z.strictObject(removable(acceptanceFields)).nullable().optional(),
});

/** The policy a merge patch left, checked whole as a created pool's is; INVALID_INPUT otherwise. */
export function checkedPolicy(policy: unknown): PoolPolicy {
  const result = policySchema.safeParse(policy);
  refuseInvalid({ ...result, target: 'policy' });
  return result.data!;
}
