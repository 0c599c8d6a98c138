import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { COMMAND_KINDS, COMMAND_STATUSES, OPEN_COMMAND_STATUSES } from '../../domain/command-status';
import { DrydockError } from '../../domain/errors';
import { DEFAULT_COMMAND_EXPIRY_MS, MAX_COMMAND_EXPIRY_MS } from '../../domain/node-command';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../../db/client';
import {
  findCommand,
  listNodeCommands,
  reportedActionsOf,
  runCommandView,
  type CommandRow,
} from '../../db/queries/commands';
import { getOperableNode } from '../../db/queries/nodes';
import { requireAction } from '../auth';
import type { AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import {
  boundedDuration,
  cursor,
  errorResponses,
  idempotencyKeyHeaders,
  idOf,
  json,
  jsonBody,
  limit,
  nodeIdParams,
  queryInteger,
  reason,
  record,
  slug,
  text,
} from '../schemas';
import { cancelRunCommand, requestRunCommand } from '../services/commands';

/** A value given to an action's parameter: one line of text; the agent checks it against the declared pattern. */
const argValue = text({
  max: 256,
  description: "a parameter's value, checked by the agent against its pattern",
});

const expiresIn = boundedDuration(
  { min: 1000, max: MAX_COMMAND_EXPIRY_MS },
  { min: '1s', max: `${MAX_COMMAND_EXPIRY_MS / 86_400_000}d`, form: '30m, 2h or 1d' },
).openapi({
  type: 'string',
  example: '1h',
  description: 'how long the command waits for its node (default 1h, at most 7d)',
});

const CommandSchema = z
  .object({
    id: z.string(),
    nodeId: z.string(),
    kind: z.enum(COMMAND_KINDS),
    action: z.string().nullable(),
    args: z.record(z.string(), z.string()),
    status: z.enum(COMMAND_STATUSES),
    statusReason: z
      .string()
      .nullable()
      .openapi({ description: 'why it was refused, failed, returned or expired' }),
    requestedBy: z.string().nullable(),
    reason: z.string().nullable(),
    operationId: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    exitCode: z.number().int().nullable(),
    output: z
      .object({
        stdout: z.string(),
        stderr: z.string(),
        droppedBytes: z
          .number()
          .int()
          .openapi({ description: "output bytes past the action's output limit, not kept (0: all of it)" }),
      })
      .nullable()
      .openapi({ description: 'what the action printed, as UTF-8 text; null in listings' }),
  })
  .openapi('NodeCommand');

const commandParams = z.object({ id: idOf('cmd').openapi({ param: { name: 'id', in: 'path' } }) });

const runRoute = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/commands',
  operationId: 'runNodeCommand',
  tags: ['commands'],
  summary:
    "Run one of the actions configured on the node's agent (argv from its config, never a shell string)",
  request: {
    params: nodeIdParams,
    headers: idempotencyKeyHeaders,
    ...jsonBody(
      z.strictObject({
        action: slug.openapi({ example: 'diagnostics' }),
        args: record(slug, argValue).optional(),
        reason,
        expiresIn: expiresIn.optional(),
      }),
      true,
    ),
  },
  responses: {
    201: json(CommandSchema, 'queued: the agent gets it now, or when it comes back (until expiresAt)'),
    200: json(CommandSchema, 'the command this Idempotency-Key already queued'),
    ...errorResponses,
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/commands',
  operationId: 'listNodeCommands',
  tags: ['commands'],
  summary: "The node's commands, newest first (without their output)",
  request: {
    params: nodeIdParams,
    query: z.strictObject({
      kind: z.enum(COMMAND_KINDS).optional(),
      status: z.enum(COMMAND_STATUSES).optional(),
      limit: limit(100, 20),
      cursor: cursor.optional(),
    }),
  },
  responses: {
    200: json(
      z.object({ items: z.array(CommandSchema), nextCursor: z.string().nullable() }),
      'a page of commands',
    ),
    ...errorResponses,
  },
});

const ActionSchema = z
  .object({
    name: z.string(),
    params: z.record(z.string(), z.object({ pattern: z.string(), default: z.string().optional() })),
    timeoutSeconds: z.number().int(),
    restarts: z.boolean(),
  })
  .openapi('NodeAction');

const actionsRoute = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/actions',
  operationId: 'listNodeActions',
  tags: ['commands'],
  summary: "The actions the node's agent runs, as it said at its latest session start (no command lines)",
  request: { params: nodeIdParams },
  responses: {
    200: json(
      z.object({
        items: z.array(ActionSchema),
        reportedAt: z.string().nullable().openapi({ description: 'null: its agent never said' }),
      }),
      "the node's actions",
    ),
    ...errorResponses,
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/v1/commands/{id}',
  operationId: 'getNodeCommand',
  tags: ['commands'],
  summary: 'A command, with its output; `wait` holds the answer until it has ended (up to 60 s)',
  request: {
    params: commandParams,
    query: z.strictObject({ wait: queryInteger(0, 60, 0) }),
  },
  responses: { 200: json(CommandSchema, 'the command'), ...errorResponses },
});

const cancelRoute = createRoute({
  method: 'delete',
  path: '/v1/commands/{id}',
  operationId: 'cancelNodeCommand',
  tags: ['commands'],
  summary: 'Withdraw a command the node has not started (one running is not stopped from here)',
  request: { params: commandParams },
  responses: { 200: json(CommandSchema, 'the command, cancelled (now, or before)'), ...errorResponses },
});

/**
 * Command `id`, of a node the caller may operate. One of a node it cannot see is NOT_FOUND in the
 * words of a missing command: the answer does not say that it exists.
 */
async function operableCommand(db: DbOrTx, id: string, principal: Principal): Promise<CommandRow> {
  const missing = () => new DrydockError('NOT_FOUND', `command ${id} not found`, { commandId: id });
  const command = await findCommand(db, id);
  if (!command) throw missing();
  try {
    await getOperableNode(db, command.nodeId, principal);
  } catch (error) {
    throw error instanceof DrydockError && error.code === 'NOT_FOUND' ? missing() : error;
  }
  return command;
}

/** How often a `wait` looks again without a wake-up (an event NOTIFY lost while the LISTEN reconnected). */
const RECHECK_MS = 5_000;

/** Commands: run a configured action on a node, follow it, read its output, withdraw it. */
export function commandRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(runRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:command');
    const deps = c.get('deps');
    const body = c.req.valid('json');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const { command, created } = await requestRunCommand(deps, node, {
      principal,
      action: body.action,
      args: body.args ?? {},
      reason: body.reason,
      expiresInMs: body.expiresIn ?? DEFAULT_COMMAND_EXPIRY_MS,
      idempotencyKey: c.req.valid('header')['idempotency-key'],
    });
    return c.json(runCommandView(command, true), created ? 201 : 200);
  });

  router.openapi(listRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const deps = c.get('deps');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const q = c.req.valid('query');
    const rows = await listNodeCommands(deps.db, node.id, {
      kind: q.kind,
      status: q.status,
      before: decodeCursor(q.cursor, /^cmd_[0-9A-Z]{26}$/),
      limit: q.limit + 1,
    });
    const listed = page(rows, q.limit, (row) => row.id);
    return c.json(
      { items: listed.items.map((row) => runCommandView(row, false)), nextCursor: listed.nextCursor },
      200,
    );
  });

  router.openapi(actionsRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const deps = c.get('deps');
    const node = await getOperableNode(deps.db, c.req.valid('param').id, principal);
    const reported = await reportedActionsOf(deps.db, node.id);
    return c.json(
      { items: reported?.actions ?? [], reportedAt: reported?.reportedAt.toISOString() ?? null },
      200,
    );
  });

  router.openapi(getRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:command');
    const deps = c.get('deps');
    const id = c.req.valid('param').id;
    const deadline = Date.now() + c.req.valid('query').wait * 1000;
    const signal = c.req.raw.signal;
    for (;;) {
      // Armed before the read: the event of a step committed while we read wakes the wait.
      const wakeup = deps.feedWakeups.arm('');
      try {
        const command = await operableCommand(deps.db, id, principal);
        const left = deadline - Date.now();
        if (!OPEN_COMMAND_STATUSES.includes(command.status) || left <= 0 || signal.aborted) {
          return c.json(runCommandView(command, true), 200);
        }
        await wakeup.wait(Math.min(left, RECHECK_MS), signal);
      } finally {
        wakeup.cancel();
      }
    }
  });

  router.openapi(cancelRoute, async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:command');
    const deps = c.get('deps');
    const id = c.req.valid('param').id;
    const command = await operableCommand(deps.db, id, principal);
    const cancelled = await cancelRunCommand(deps, command, principal);
    return c.json(runCommandView(cancelled, true), 200);
  });
  return router;
}
