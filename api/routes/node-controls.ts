import { OpenAPIHono, z } from '@hono/zod-openapi';
import { clearMaintenance, cordon, label, taint, uncordon, type Control } from '../../domain/controls';
import { LABEL_KEY, LABEL_VALUE, MAX_LABELS } from '../../domain/labels';
import type { Action } from '../../domain/principal';
import { MAX_TAINT_KEYS, TAINT_KEY } from '../../domain/taints';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import type { Tag } from '../openapi';
import { nodeAnswer, nodeRoute, nodeTarget } from '../node-route';
import { json, mutationBody, reason, record, version } from '../schemas';
import { adoptNode, controlNode, deleteNodeOf } from '../services/node-controls';

type Body = { reason?: string; version?: number };

/**
 * A control route: validate, authorize, one transaction, the node back (unchanged when nothing
 * moved). `control` builds the control from the body, so body rules are checked before any lookup.
 */
interface ControlRoute<B extends Body> {
  path: string;
  operationId: string;
  tags: [Tag];
  summary: string;
  action: Action;
  body: z.ZodType<B>;
  /** Method syntax on purpose: each route's `control` takes the body its own schema produced. */
  control(body: B): Control;
}

/** Infers each spec's body type, so its `control` takes what its own schema produced. */
const controlRoute = <B extends Body>(spec: ControlRoute<B>) => spec;

const cordonRoute = controlRoute({
  path: '/v1/nodes/{id}/cordon',
  operationId: 'cordonNode',
  tags: ['nodes'],
  summary: 'Cordon a node: no new placement',
  action: 'compute:nodes:cordon',
  body: mutationBody,
  control: () => cordon,
});

const uncordonRoute = controlRoute({
  path: '/v1/nodes/{id}/uncordon',
  operationId: 'uncordonNode',
  tags: ['nodes'],
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

const taintRoute = controlRoute({
  path: '/v1/nodes/{id}/taint',
  operationId: 'taintNode',
  tags: ['nodes'],
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

const labelRoute = controlRoute({
  path: '/v1/nodes/{id}/label',
  operationId: 'labelNode',
  tags: ['nodes'],
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

const maintenanceRoute = controlRoute({
  path: '/v1/nodes/{id}/maintenance',
  operationId: 'clearNodeMaintenance',
  tags: ['nodes'],
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

const CONTROLS: ControlRoute<Body>[] = [cordonRoute, uncordonRoute, taintRoute, labelRoute, maintenanceRoute];

const adoptRoute = nodeRoute({
  path: '/v1/nodes/{id}/adopt',
  operationId: 'adoptNode',
  tags: ['enrollment'],
  summary: 'Adopt again: back to adopting, then adopted once acceptance passes',
  body: mutationBody,
  answer: nodeAnswer,
});

const deleteRoute = nodeRoute({
  method: 'delete',
  path: '/v1/nodes/{id}',
  operationId: 'deleteNode',
  tags: ['nodes'],
  summary: 'Delete a node: a tombstone that keeps its history',
  body: mutationBody,
  answer: json(z.object({ nodeId: z.string(), deleted: z.boolean() }), 'deleted now, or already'),
});

/** The controls that change one node at once: cordon, taint, label, maintenance, adopt, delete. */
export function nodeControlsRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  for (const spec of CONTROLS) {
    const { path, operationId, tags, summary, body } = spec;
    const route = nodeRoute({ path, operationId, tags, summary, body, answer: nodeAnswer });
    router.openapi(route, async (c) => {
      requireAction(c.get('principal'), spec.action);
      // The control is built first, so body rules are checked before any lookup.
      const control = spec.control(c.req.valid('json'));
      return c.json(await controlNode(c.get('deps'), nodeTarget(c), control), 200);
    });
  }

  router.openapi(adoptRoute, async (c) => {
    requireAction(c.get('principal'), 'compute:nodes:provision');
    return c.json(await adoptNode(c.get('deps'), nodeTarget(c)), 200);
  });

  router.openapi(deleteRoute, async (c) => {
    requireAction(c.get('principal'), 'compute:nodes:delete');
    return c.json(await deleteNodeOf(c.get('deps'), nodeTarget(c)), 200);
  });
  return router;
}

function unique(keys: string[] | undefined): string[] {
  return [...new Set(keys ?? [])];
}
