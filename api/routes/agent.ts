import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { CommandAnswer } from '../../domain/command-status';
import { commandView } from '../../db/queries/commands';
import { requireAgent } from '../auth';
import { inventorySchema } from '../inventory-schema';
import type { AppEnv } from '../env';
import { MAX_OUTPUT_BYTES, outputText } from '../../domain/node-command';
import { errorResponses, idOf, json, jsonBody, queryInteger, reason, record, slug, text } from '../schemas';
import { answerCommand, join, reportFacts, reportReturned, waitForCommands } from '../services/agent';
import { noteAgentSession } from '../services/agent-identity';

const hostname = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/, 'a hostname of letters, digits, . and -');
const ed25519Pem = z
  .string()
  .max(1000)
  .regex(
    /^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PUBLIC KEY-----\n?$/,
    'an Ed25519 public key in PEM',
  );

const joinRoute = createRoute({
  method: 'post',
  path: '/v1/agent/join',
  operationId: 'joinCluster',
  tags: ['enrollment'],
  summary: 'A machine joins: with a join token it is adopted; without one it waits for approval',
  security: [],
  request: jsonBody(
    z.strictObject({
      token: z
        .string()
        .regex(/^[A-Za-z0-9._~+/=-]{1,200}$/, 'a join token as `drydock token create` printed it')
        .optional(),
      publicKey: ed25519Pem,
      hostname,
      displayName: text({ max: 128, description: 'a name for people' }).optional(),
      poolId: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,62}$/)
        .optional(),
      inventory: inventorySchema.default({ accelerators: [], storageRoots: [] }),
    }),
    true,
  ),
  responses: {
    201: json(
      z.object({
        nodeId: z.string(),
        credential: z.string(),
        credentialExpiresAt: z.string(),
        clusterId: z.string(),
        caPublicKey: z.string(),
        provisionState: z.string(),
      }),
      'the new node identity; the credential is shown once',
    ),
    ...errorResponses,
  },
});

/** The cluster CA key an agent should trust, with the chain from the keys it replaced (ca.ts). */
const CaOfferSchema = z
  .object({
    publicKey: z.string(),
    endorsements: z.array(z.object({ payload: z.string(), signature: z.string() })),
  })
  .openapi('CaOffer', {
    description:
      'the current CA public key; each endorsement is a newer key signed by the key it replaced, newest first',
  });

const caOffer = (deps: AppEnv['Variables']['deps']) => ({
  publicKey: deps.caPublicKeyPem,
  endorsements: deps.caEndorsements ?? [],
});

const SeenSchema = z.object({
  nodeId: z.string(),
  ok: z.literal(true),
  ca: CaOfferSchema,
  credential: z
    .object({ expiresAt: z.string(), renewAfter: z.string() })
    .openapi({ description: 'the credential of this call: when it ends, and when the agent renews it' }),
});

/** An agent run: a new one at each start of `drydock-agent run` (docs/security.md, A copied identity). */
const sessionId = z
  .string()
  .regex(/^[A-Za-z0-9-]{8,64}$/, 'a session id of 8 to 64 letters, digits and -')
  .openapi({
    description:
      "the agent run's id, new at each start: two alternating runs are one identity on two machines",
  });

const heartbeatRoute = createRoute({
  method: 'post',
  path: '/v1/agent/heartbeat',
  operationId: 'sendHeartbeat',
  tags: ['agent'],
  summary: 'Agent heartbeat (every 10 s); `state: offline` says goodbye',
  request: jsonBody(
    z.strictObject({ state: z.enum(['running', 'offline']).optional(), sessionId: sessionId.optional() }),
  ),
  responses: {
    200: json(SeenSchema, 'seen'),
    ...errorResponses,
  },
});

const CommandSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    action: z.string().nullable(),
    condition: z.string().nullable(),
    args: z
      .record(z.string(), z.string())
      .nullable()
      .openapi({ description: "a run command's parameter values" }),
    payload: z.string().nullable(),
    signature: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi('AgentCommand');

const commandsRoute = createRoute({
  method: 'get',
  path: '/v1/agent/commands',
  operationId: 'pollCommands',
  tags: ['agent'],
  summary: "Long-poll the node's pending commands, oldest first",
  request: { query: z.strictObject({ wait: queryInteger(0, 60, 30) }) },
  responses: {
    200: json(
      z.object({ items: z.array(CommandSchema), ca: CaOfferSchema }),
      'pending commands, and the CA key their signatures are checked against',
    ),
    ...errorResponses,
  },
});

/** Ack or refuse: final for the command; the same answer again is accepted, another is INVALID_STATE. */
const answerRoute = <A extends CommandAnswer>(answer: A) =>
  createRoute({
    method: 'post',
    path: `/v1/agent/commands/{id}/${answer === 'acked' ? 'ack' : 'refuse'}`,
    operationId: answer === 'acked' ? 'ackCommand' : 'refuseCommand',
    tags: ['agent'],
    summary:
      answer === 'acked' ? 'The agent carried the command out' : 'The agent cannot or will not carry it out',
    request: {
      params: z.object({ id: idOf('cmd') }),
      ...jsonBody(
        answer === 'refused' ? z.strictObject({ reason }) : z.strictObject({}),
        answer === 'refused',
      ),
    },
    responses: {
      200: json(CommandSchema.extend({ status: z.string() }), 'the command'),
      ...errorResponses,
    },
  });

const returnedRoute = createRoute({
  method: 'post',
  path: '/v1/agent/commands/{id}/returned',
  operationId: 'reportCommandReturned',
  tags: ['agent'],
  summary:
    'The machine came back from the restarting action of an acked remediate command (event node.remediation.returned, once)',
  request: { params: z.object({ id: idOf('cmd') }), ...jsonBody(z.strictObject({})) },
  responses: {
    200: json(
      CommandSchema.extend({ status: z.string(), returnedAt: z.string() }),
      'the command, and when its return was first reported',
    ),
    ...errorResponses,
  },
});

const startRoute = createRoute({
  method: 'post',
  path: '/v1/agent/commands/{id}/start',
  operationId: 'startCommand',
  tags: ['agent'],
  summary: 'The agent journaled a run command and starts it now (running; event node.command.started)',
  request: { params: z.object({ id: idOf('cmd') }), ...jsonBody(z.strictObject({})) },
  responses: { 200: json(CommandSchema.extend({ status: z.string() }), 'the command'), ...errorResponses },
});

/** Output as it came from the program: its bytes in base64, decoded and kept as text by the API. */
const outputBytes = z
  .string()
  .max(Math.ceil(MAX_OUTPUT_BYTES / 3) * 4)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64 of the bytes the program wrote')
  .refine(
    (value) => value.length % 4 === 0,
    'base64 of the bytes the program wrote: a length a multiple of 4',
  );

/** How many bytes a base64 string holds. */
const decodedLength = (base64: string) => (base64.length / 4) * 3 - base64.match(/=*$/)![0].length;

const resultRoute = createRoute({
  method: 'post',
  path: '/v1/agent/commands/{id}/result',
  operationId: 'reportCommandResult',
  tags: ['agent'],
  summary:
    'How a run command ended, with its output in base64 (a body of up to 2 MiB: the one exception to the 64 KiB limit)',
  request: {
    params: z.object({ id: idOf('cmd') }),
    ...jsonBody(
      z
        .strictObject({
          status: z.enum(['succeeded', 'failed', 'returned']),
          reason: reason.optional(),
          exitCode: z.number().int().min(0).max(255).nullable(),
          stdout: outputBytes,
          stderr: outputBytes,
          droppedBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
        })
        .refine((r) => decodedLength(r.stdout) + decodedLength(r.stderr) <= MAX_OUTPUT_BYTES, {
          error: `stdout and stderr together are at most ${MAX_OUTPUT_BYTES} bytes`,
          path: ['stdout'],
        }),
      true,
    ),
  },
  responses: { 200: json(CommandSchema.extend({ status: z.string() }), 'the command'), ...errorResponses },
});

const ActionOnNodeSchema = z.strictObject({
  name: slug,
  params: record(
    slug,
    z.strictObject({
      pattern: text({ max: 256, description: 'the pattern a value must match whole (checked by the agent)' }),
      default: text({ max: 256, description: 'the value when none is given' }).optional(),
    }),
  ),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86_400),
  restarts: z.boolean(),
});

const factsRoute = createRoute({
  method: 'put',
  path: '/v1/agent/facts',
  operationId: 'reportAgentFacts',
  tags: ['agent'],
  summary:
    'At session start: the boot (boot id, boot time) and the actions the agent runs; a new boot appends node.booted',
  request: jsonBody(
    z.strictObject({
      bootId: z
        .string()
        .regex(/^[0-9a-f-]{1,64}$/, "the kernel's boot id, as /proc/sys/kernel/random/boot_id has it"),
      bootedAt: z.iso.datetime({ offset: true }),
      actions: z.array(ActionOnNodeSchema).max(100),
    }),
    true,
  ),
  responses: {
    200: json(
      z.object({
        nodeId: z.string(),
        booted: z.boolean().openapi({ description: 'a boot other than the last reported' }),
      }),
      'recorded',
    ),
    ...errorResponses,
  },
});

/**
 * The routes a node's agent calls: join, heartbeat, the command long-poll, its answers, and the
 * return from a restarting action.
 */
export function agentRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();

  router.openapi(joinRoute, async (c) => {
    const deps = c.get('deps');
    const joined = await join(deps, c.req.valid('json'), deps.rateLimits.sourceOf(c));
    return c.json({ ...joined, clusterId: deps.clusterId, caPublicKey: deps.caPublicKeyPem }, 201);
  });

  router.openapi(heartbeatRoute, async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'), { beforeAdmission: true });
    const deps = c.get('deps');
    const body = c.req.valid('json');
    if (body.sessionId !== undefined) await noteAgentSession(deps, node, body.sessionId);
    // Only a beat that starts or ends a session has a transaction to wait for.
    await deps.heartbeats.beat(node.id, body.state ?? 'running');
    deps.metrics.heartbeat();
    const { lifetime } = c.get('agentCredential')!;
    return c.json(
      {
        nodeId: node.id,
        ok: true as const,
        ca: caOffer(deps),
        credential: lifetime,
      },
      200,
    );
  });

  router.openapi(commandsRoute, async (c) => {
    const deps = c.get('deps');
    const principal = c.get('principal');
    const node = requireAgent(principal, c.get('agentNode'), { purgeOnly: true, beforeAdmission: true });
    const commands = await waitForCommands(deps, {
      principal,
      node,
      credential: c.req.header('authorization')!.slice('Bearer '.length),
      waitMs: c.req.valid('query').wait * 1000,
      signal: c.req.raw.signal,
    });
    // The CA key comes with the commands: a blocked node, which may not heartbeat, still gets it.
    return c.json({ items: commands.map(commandView), ca: caOffer(deps) }, 200);
  });

  for (const answer of ['acked', 'refused'] as const) {
    router.openapi(answerRoute(answer), async (c) => {
      const node = requireAgent(c.get('principal'), c.get('agentNode'), { purgeOnly: true });
      const body = c.req.valid('json') as { reason?: string };
      const command = await answerCommand(c.get('deps'), {
        node,
        commandId: c.req.valid('param').id,
        answer,
        reason: body.reason ?? null,
      });
      return c.json({ ...commandView(command), status: command.status }, 200);
    });
  }

  router.openapi(startRoute, async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'));
    const command = await answerCommand(c.get('deps'), {
      node,
      commandId: c.req.valid('param').id,
      answer: 'running',
      reason: null,
    });
    return c.json({ ...commandView(command), status: command.status }, 200);
  });

  router.openapi(resultRoute, async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'));
    const body = c.req.valid('json');
    const command = await answerCommand(c.get('deps'), {
      node,
      commandId: c.req.valid('param').id,
      answer: body.status,
      reason: body.reason ?? null,
      output: {
        exitCode: body.exitCode,
        stdout: outputText(body.stdout),
        stderr: outputText(body.stderr),
        droppedBytes: body.droppedBytes,
      },
    });
    return c.json({ ...commandView(command), status: command.status }, 200);
  });

  router.openapi(factsRoute, async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'), { beforeAdmission: true });
    const booted = await reportFacts(c.get('deps'), node, c.req.valid('json'));
    return c.json({ nodeId: node.id, booted }, 200);
  });

  router.openapi(returnedRoute, async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'));
    const { command, returnedAt } = await reportReturned(c.get('deps'), {
      node,
      commandId: c.req.valid('param').id,
    });
    return c.json({ ...commandView(command), status: command.status, returnedAt }, 200);
  });
  return router;
}
