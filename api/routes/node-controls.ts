import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import {
  accept,
  clearMaintenance,
  cordon,
  label,
  readopt,
  taint,
  uncordon,
  type Control,
} from '../../domain/controls';
import { LABEL_KEY, LABEL_VALUE, MAX_LABELS } from '../../domain/labels';
import { DRAINING } from '../../domain/node';
import type { Action } from '../../domain/principal';
import { deleteNode } from '../../db/delete-node';
import { changeNode } from '../../db/nodes';
import { MAX_TAINT_KEYS, TAINT_KEY } from '../../domain/taints';
import { drainWorkflowId, purgeAnsweredSignal, purgeWorkflowId } from '../../workflows/definitions';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import {
  errorResponses,
  expectedVersion,
  ifMatchHeaders,
  json,
  jsonBody,
  mutationBody,
  NodeSchema,
  nodeIdParams,
  reason,
  record,
  version,
} from '../schemas';
import { signalIfRunning } from '../workflows';

export const nodeControlsRouter = new OpenAPIHono<AppEnv>();

type Body = { reason?: string; version?: number };

/**
 * A control route: validate, authorize, one transaction, the node back (unchanged when nothing
 * moved). `control` builds the control from the body, so body rules are checked before any lookup.
 */
interface ControlRoute<B extends Body> {
  path: string;
  summary: string;
  action: Action;
  body: z.ZodType<B>;
  /** Method syntax on purpose: each route's `control` takes the body its own schema produced. */
  control(body: B): Control;
}

function controlRoute<B extends Body>(spec: ControlRoute<B>) {
  nodeControlsRouter.openapi(
    createRoute({
      method: 'post',
      path: spec.path,
      summary: spec.summary,
      request: { params: nodeIdParams, headers: ifMatchHeaders, ...jsonBody(spec.body) },
      responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
    }),
    async (c) => {
      const principal = c.get('principal');
      requireAction(principal, spec.action);
      const body = c.req.valid('json') as B;
      const control = spec.control(body);
      const { db, temporal } = c.get('deps');
      const { before, after, view } = await changeNode(db, {
        nodeId: c.req.valid('param').id,
        principal,
        version: expectedVersion(body.version, c.req.valid('header')['if-match']),
        control,
        reason: body.reason,
      });
      if (before.noScheduleReasons.includes(DRAINING) && !after.noScheduleReasons.includes(DRAINING)) {
        await signalIfRunning(temporal, drainWorkflowId(after.id), 'cancel');
      }
      return c.json(view, 200);
    },
  );
}

controlRoute({
  path: '/v1/nodes/{id}/cordon',
  summary: 'Cordon a node: no new placement',
  action: 'compute:nodes:cordon',
  body: mutationBody,
  control: () => cordon,
});

controlRoute({
  path: '/v1/nodes/{id}/uncordon',
  summary: 'Uncordon a node; ends a drain in progress',
  action: 'compute:nodes:cordon',
  body: mutationBody,
  control: () => uncordon,
});

const taintKey = z
  .string()
  .regex(
    TAINT_KEY,
    'a taint key is 1–128 of letters, digits and . _ / = : -, starting and ending with a letter or digit',
  );
const taintKeys = z.array(taintKey).max(MAX_TAINT_KEYS, `at most ${MAX_TAINT_KEYS} keys`);

controlRoute({
  path: '/v1/nodes/{id}/taint',
  summary: 'Add and remove operator taints (NoSchedule reasons taint:<key>)',
  action: 'compute:nodes:update',
  body: z.strictObject({
    add: taintKeys.optional(),
    remove: taintKeys.optional(),
    reason: reason.optional(),
    version: version.optional(),
  }),
  control: (body) => taint(unique(body.add), unique(body.remove)),
});

const labelKey = z
  .string()
  .regex(
    LABEL_KEY,
    'a label key is up to 128 of letters, digits and . _ / -, starting and ending with a letter or digit',
  );
const labelValue = z
  .string()
  .regex(LABEL_VALUE, 'a label value is up to 256 of letters, digits and . _ : / @ + = -');

controlRoute({
  path: '/v1/nodes/{id}/label',
  summary: 'Set and remove operator labels',
  action: 'compute:nodes:update',
  body: z.strictObject({
    set: record(labelKey, labelValue)
      .refine((set) => Object.keys(set).length <= MAX_LABELS, `at most ${MAX_LABELS} labels`)
      .optional(),
    remove: z.array(labelKey).max(MAX_LABELS, `at most ${MAX_LABELS} keys`).optional(),
    reason: reason.optional(),
    version: version.optional(),
  }),
  control: (body) => label(body.set ?? {}, unique(body.remove)),
});

controlRoute({
  path: '/v1/nodes/{id}/maintenance',
  summary: 'Clear maintenance (only the system turns it on)',
  action: 'compute:nodes:update',
  body: z.strictObject({
    maintenance: z.literal(false, {
      error: 'only { "maintenance": false } is accepted: the system turns maintenance on',
    }),
    reason: reason.optional(),
    version: version.optional(),
  }),
  control: () => clearMaintenance,
});

nodeControlsRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/nodes/{id}/adopt',
    summary: 'Adopt again: back to adopting, then adopted once acceptance passes',
    request: { params: nodeIdParams, headers: ifMatchHeaders, ...jsonBody(mutationBody) },
    responses: { 200: json(NodeSchema, 'the node'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:provision');
    const body = c.req.valid('json');
    const { db } = c.get('deps');
    const input = { nodeId: c.req.valid('param').id, principal, reason: body.reason };
    await changeNode(db, {
      ...input,
      version: expectedVersion(body.version, c.req.valid('header')['if-match']),
      control: readopt,
    });
    // Acceptance is its own step: the node stays out of placement until its checks pass.
    const { view } = await changeNode(db, { ...input, control: accept });
    return c.json(view, 200);
  },
);

nodeControlsRouter.openapi(
  createRoute({
    method: 'delete',
    path: '/v1/nodes/{id}',
    summary: 'Delete a node: a tombstone that keeps its history',
    request: { params: nodeIdParams, headers: ifMatchHeaders, ...jsonBody(mutationBody) },
    responses: {
      200: json(z.object({ nodeId: z.string(), deleted: z.boolean() }), 'deleted now, or already'),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:delete');
    const body = c.req.valid('json');
    const { db, temporal } = c.get('deps');
    const nodeId = c.req.valid('param').id;
    const result = await deleteNode(db, {
      nodeId,
      principal,
      version: expectedVersion(body.version, c.req.valid('header')['if-match']),
      reason: body.reason,
    });
    if (result.deleted) {
      await signalIfRunning(temporal, drainWorkflowId(nodeId), 'cancel');
      // Deleting a purging node forgets it: its purge ends `cancelled`.
      await signalIfRunning(temporal, purgeWorkflowId(nodeId), purgeAnsweredSignal.name);
    }
    return c.json(result, 200);
  },
);

function unique(keys: string[] | undefined): string[] {
  return [...new Set(keys ?? [])];
}
