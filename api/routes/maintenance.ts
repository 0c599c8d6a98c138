import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { DrydockError } from '../../domain/errors';
import {
  DEFAULT_HEALTHY_AFTER_MS,
  DEFAULT_REBOOT_TIMEOUT_MS,
  DEFAULT_VERIFY_TIMEOUT_MS,
  MAX_STEPS,
  planProblem,
  type MaintenancePlan,
  type MaintenanceStep,
} from '../../domain/maintenance';
import { getOperableNode } from '../../db/queries/nodes';
import { getOperablePool } from '../../db/queries/pools';
import { formatSelector } from '../../domain/selector';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  boundedDuration,
  deadlineText,
  idempotencyKeyHeaders,
  jsonBody,
  labelSelector,
  NodeOperationSchema,
  OperationSchema,
  nodeIdParams,
  reason,
  record,
  selectorOf,
  slug,
  startResponses,
  text,
} from '../schemas';
import { maintainNode, maintainPool } from '../services/requests';

/** A duration in a body (`15m`, `90s`), within `min`…`max`, read in ms. */
const duration = (description: string, min: number, max: number) =>
  boundedDuration(
    { min, max },
    { min: `${min / 1000}s`, max: `${max / 60_000}m`, form: '90s, 15m or 1h' },
  ).openapi({
    type: 'string',
    description,
  });

const timeouts = {
  rebootTimeout: duration(
    'how long a reboot may take to come back on a new boot id (default 15m)',
    10_000,
    24 * 3_600_000,
  ).optional(),
  healthyAfter: duration(
    'how long every probe must hold healthy for verify (default 60s)',
    0,
    24 * 3_600_000,
  ).optional(),
  verifyTimeout: duration(
    'how long verify waits for the probes to hold before it fails (default 10m)',
    10_000,
    24 * 3_600_000,
  ).optional(),
};

const StepSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('drain'),
      deadline: deadlineText('when what is still live goes by force (as a drain takes it)').optional(),
    }),
    z.strictObject({
      kind: z.literal('run'),
      action: slug,
      args: record(slug, text({ max: 256, description: "a parameter's value" })).optional(),
    }),
    z.strictObject({ kind: z.literal('reboot') }),
    z.strictObject({ kind: z.literal('verify'), action: slug.optional() }),
    z.strictObject({ kind: z.literal('uncordon') }),
  ])
  .openapi('MaintenanceStep');

const maintenanceRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/maintenances',
  operationId: 'maintainNode',
  tags: ['maintenance'],
  summary: 'Carry out a maintenance plan on the node, step after step (workflow maintenance/<nodeId>)',
  request: {
    params: nodeIdParams,
    headers: idempotencyKeyHeaders,
    ...jsonBody(
      z.strictObject({ steps: z.array(StepSchema).min(1).max(MAX_STEPS), reason, ...timeouts }),
      true,
    ),
  },
  responses: startResponses(
    NodeOperationSchema,
    'the maintenance began',
    'a maintenance already runs on the node',
  ),
});

const rebootRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/reboot',
  operationId: 'rebootNode',
  tags: ['maintenance'],
  summary: 'A verified reboot: (drain), reboot, back on a new boot id, probes healthy, (uncordon)',
  request: {
    params: nodeIdParams,
    headers: idempotencyKeyHeaders,
    ...jsonBody(
      z.strictObject({
        reason,
        drain: z
          .strictObject({ deadline: deadlineText('when what is still live goes by force').optional() })
          .optional(),
        uncordon: z.boolean().optional(),
        ...timeouts,
      }),
      true,
    ),
  },
  responses: startResponses(
    NodeOperationSchema,
    'the reboot began',
    'a maintenance already runs on the node',
  ),
});

const poolMaintenanceRoute = createRoute({
  method: 'post',
  path: '/v1/pools/{id}/maintenance',
  operationId: 'maintainPool',
  tags: ['maintenance'],
  summary:
    'A rolling maintenance: the plan on each selected node, at most maxConcurrent at once, pausing at maxFailures (workflow pool-maintenance/<poolId>)',
  request: {
    params: z.object({ id: slug }),
    headers: idempotencyKeyHeaders,
    ...jsonBody(
      z.strictObject({
        selector: labelSelector.optional(),
        steps: z.array(StepSchema).min(1).max(MAX_STEPS),
        maxConcurrent: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .openapi({ description: 'node maintenances at once (default 1)' }),
        maxFailures: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .openapi({ description: 'failed node maintenances that pause it (default 1)' }),
        reason,
        ...timeouts,
      }),
      true,
    ),
  },
  responses: startResponses(
    z.object({ operation: OperationSchema }),
    'the rolling maintenance began',
    'a rolling maintenance already runs on the pool',
  ),
});

/** The plan of a request: its steps and its timeouts, the defaults filled in. */
function planOf(
  steps: MaintenanceStep[],
  body: { rebootTimeout?: number; healthyAfter?: number; verifyTimeout?: number },
): MaintenancePlan {
  const problem = planProblem(steps);
  if (problem) throw new DrydockError('INVALID_INPUT', problem, { steps: steps.length });
  return {
    steps,
    rebootTimeoutMs: body.rebootTimeout ?? DEFAULT_REBOOT_TIMEOUT_MS,
    healthyAfterMs: body.healthyAfter ?? DEFAULT_HEALTHY_AFTER_MS,
    verifyTimeoutMs: body.verifyTimeout ?? DEFAULT_VERIFY_TIMEOUT_MS,
  };
}

/** Maintenance of one node: a plan of steps, and the verified reboot. */
export function maintenanceRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(maintenanceRoute, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    requireAction(principal, 'compute:nodes:command');
    if (body.steps.some((s) => s.kind === 'drain')) requireAction(principal, 'compute:nodes:drain');
    const plan = planOf(body.steps, body);
    const deps = c.get('deps');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const result = await maintainNode(deps, node, {
      principal,
      reason: body.reason,
      plan,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      binds: { ...body },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  });

  router.openapi(rebootRoute, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    requireAction(principal, 'compute:nodes:command');
    if (body.drain) requireAction(principal, 'compute:nodes:drain');
    const steps: MaintenanceStep[] = [
      ...(body.drain
        ? [{ kind: 'drain' as const, ...(body.drain.deadline ? { deadline: body.drain.deadline } : {}) }]
        : []),
      { kind: 'reboot' },
      { kind: 'verify' },
      ...(body.uncordon ? [{ kind: 'uncordon' as const }] : []),
    ];
    const deps = c.get('deps');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const result = await maintainNode(deps, node, {
      principal,
      reason: body.reason,
      plan: planOf(steps, body),
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      binds: { ...body, reboot: true },
    });
    return c.json({ node: result.node, operation: result.operation }, result.created ? 202 : 200);
  });
  router.openapi(poolMaintenanceRoute, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    requireAction(principal, 'compute:nodes:command');
    if (body.steps.some((s) => s.kind === 'drain')) requireAction(principal, 'compute:nodes:drain');
    const plan = planOf(body.steps, body);
    const deps = c.get('deps');
    const selector = selectorOf(body.selector ?? '');
    const pool = await getOperablePool(deps.db, c.req.valid('param').id, principal);
    const maxConcurrent = body.maxConcurrent ?? 1;
    const maxFailures = body.maxFailures ?? 1;
    const result = await maintainPool(deps, pool, {
      principal,
      reason: body.reason,
      selector,
      plan,
      maxConcurrent,
      maxFailures,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
      binds: { ...body, selector: formatSelector(selector), maxConcurrent, maxFailures },
    });
    return c.json({ operation: result.operation }, result.created ? 202 : 200);
  });
  return router;
}
