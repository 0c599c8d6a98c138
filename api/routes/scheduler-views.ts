import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { schedulerViewOf } from '../../db/queries/scheduler-views';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  errorResponses,
  json,
  jsonBody,
  nodeIdParams,
  schedulerSource,
  SchedulerViewSchema,
  text,
} from '../schemas';
import { recordNodeSchedulerView } from '../services/scheduler-views';

const recordRoute = createRoute({
  method: 'put',
  path: '/v1/nodes/{id}/schedulers/{source}',
  operationId: 'recordSchedulerView',
  tags: ['nodes'],
  summary:
    "Record what a scheduler says of the node (a bridge); down: the node carries SchedulerNodeDown (SchedulerNodeNotReady for kubernetes:<cluster>), as an agent's fault",
  request: {
    params: nodeIdParams.extend({
      source: schedulerSource.openapi({ param: { name: 'source', in: 'path' }, example: 'slurm:hpc1' }),
    }),
    ...jsonBody(
      z.strictObject({
        name: text({ max: 128, description: "the node's name in the scheduler" }),
        state: text({ max: 64, description: "the scheduler's words for its state, e.g. mixed+drain" }),
        reason: text({ max: 256, description: "the scheduler's reason for that state" }).nullable(),
        cordoned: z.boolean().openapi({ description: 'the scheduler places no new work there' }),
        cordonedByDrydock: z
          .boolean()
          .openapi({ description: "that cordon is Drydock's, set by the bridge" }),
        down: z.boolean().openapi({
          description: "the scheduler marks it down, failed or not responding, not at Drydock's request",
        }),
        disagreement: text({
          max: 256,
          description: 'where the scheduler and Drydock disagree, in words (null: they agree)',
        }).nullable(),
      }),
      true,
    ),
  },
  responses: {
    200: json(SchedulerViewSchema, 'the view as stored (the same report again moves only observedAt)'),
    ...errorResponses,
  },
});

/** What the schedulers placing work on a node say of it, as their bridges report it. */
export function schedulerViewsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(recordRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:observe');
    const { id, source } = c.req.valid('param');
    const view = await recordNodeSchedulerView(c.get('deps'), principal, {
      nodeId: id,
      source,
      report: c.req.valid('json'),
    });
    return c.json(schedulerViewOf(view), 200);
  });
  return router;
}
