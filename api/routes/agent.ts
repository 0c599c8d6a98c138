import { createPublicKey } from 'node:crypto';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, asc, eq, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import type { Db } from '../../db/client';
import { appendEvent } from '../../db/events';
import { joinNode } from '../../db/join';
import type { NodeRow } from '../../db/nodes';
import { nodeCommands } from '../../db/schema';
import {
  purgeAnsweredSignal,
  purgeWorkflowId,
  remediationWakeSignal,
  remediationWorkflowId,
} from '../../workflows/definitions';
import { requireAgent } from '../auth';
import type { AppEnv } from '../env';
import { rateLimited } from '../rate-limit';
import { errorResponses, idOf, json, jsonBody, queryInteger, reason, text } from '../schemas';
import { signalIfRunning } from '../workflows';

export const agentRouter = new OpenAPIHono<AppEnv>();

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

const storagePath = text({ max: 1024, description: 'an absolute path' }).refine(
  (path) => path.startsWith('/'),
  'must be an absolute path, starting with /',
);

agentRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/agent/join',
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
        inventory: z
          .strictObject({
            accelerators: z
              .array(
                z.strictObject({
                  model: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
                  serial: text({ max: 128, description: "the accelerator's serial number" }),
                }),
              )
              .max(64),
            storageRoots: z
              .array(
                z.strictObject({
                  path: storagePath,
                  bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
                }),
              )
              .max(64),
          })
          .default({ accelerators: [], storageRoots: [] }),
      }),
      true,
    ),
    responses: {
      201: json(
        z.object({
          nodeId: z.string(),
          credential: z.string(),
          clusterId: z.string(),
          caPublicKey: z.string(),
          provisionState: z.string(),
        }),
        'the new node identity; the credential is shown once',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    const body = c.req.valid('json');
    assertEd25519(body.publicKey);
    const deps = c.get('deps');
    // A token-less join creates a pending node with no credential checked: the one unauthenticated
    // write, so it is limited per address. A join with a token is bounded by the token's uses.
    if (body.token === undefined) {
      const wait = deps.rateLimits.tokenlessJoins.take(deps.rateLimits.sourceOf(c));
      if (wait > 0) {
        throw rateLimited(wait, `too many joins without a token from this address; retry in ${wait} s`);
      }
    }
    const joined = await joinNode(deps.db, body);
    return c.json({ ...joined, clusterId: deps.clusterId, caPublicKey: deps.caPublicKeyPem }, 201);
  },
);

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

agentRouter.openapi(
  createRoute({
    method: 'post',
    path: '/v1/agent/heartbeat',
    summary: 'Agent heartbeat (every 10 s); `state: offline` says goodbye',
    request: jsonBody(z.strictObject({ state: z.enum(['running', 'offline']).optional() })),
    responses: {
      200: json(z.object({ nodeId: z.string(), ok: z.literal(true), ca: CaOfferSchema }), 'seen'),
      ...errorResponses,
    },
  }),
  async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'), { beforeAdmission: true });
    const deps = c.get('deps');
    await deps.heartbeats.beat(node.id, c.req.valid('json').state ?? 'running');
    return c.json({ nodeId: node.id, ok: true as const, ca: caOffer(deps) }, 200);
  },
);

const CommandSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    action: z.string().nullable(),
    payload: z.string().nullable(),
    signature: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi('AgentCommand');

/** How often a long-poll looks again even without a wake-up (another process's NOTIFY lost). */
const RECHECK_MS = 5_000;

agentRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/agent/commands',
    summary: "Long-poll the node's pending commands, oldest first",
    request: { query: z.object({ wait: queryInteger(0, 60, 30) }) },
    responses: {
      200: json(
        z.object({ items: z.array(CommandSchema), ca: CaOfferSchema }),
        'pending commands, and the CA key their signatures are checked against',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    const deps = c.get('deps');
    const waiting = { purgeOnly: true, beforeAdmission: true };
    const node = requireAgent(c.get('principal'), c.get('agentNode'), waiting);
    const credential = c.req.header('authorization')!.slice('Bearer '.length);
    const deadline = Date.now() + c.req.valid('query').wait * 1000;
    for (;;) {
      // Armed before the look, so a command queued while we read is a wake-up, not a 5 s wait.
      const wakeup = deps.wakeups.arm(node.id);
      try {
        // Each look re-checks the credential and the node: a block or revoke ends the session.
        const current = await deps.nodeCredentials.resolve(credential);
        if (!current) throw new DrydockError('UNAUTHENTICATED', 'the node credential was revoked');
        const blocked = current.node.access === 'blocked';
        requireAgent(c.get('principal'), current.node, waiting);
        const items = await pendingCommands(deps, node.id, blocked);
        // A blocked node still gets a purge (docs/lifecycle/purge.md); with none queued its session closes.
        if (blocked && items.length === 0) {
          requireAgent(c.get('principal'), current.node, { beforeAdmission: true });
        }
        const left = deadline - Date.now();
        // The CA key comes with the commands: a blocked node, which may not heartbeat, still gets it.
        if (items.length > 0 || left <= 0) return c.json({ items, ca: caOffer(deps) }, 200);
        await wakeup.wait(Math.min(left, RECHECK_MS), c.req.raw.signal);
        if (c.req.raw.signal.aborted) return c.json({ items: [], ca: caOffer(deps) }, 200);
      } finally {
        wakeup.cancel();
      }
    }
  },
);

async function pendingCommands(deps: AppEnv['Variables']['deps'], nodeId: string, purgeOnly: boolean) {
  const rows = await deps.db
    .select()
    .from(nodeCommands)
    .where(
      and(
        eq(nodeCommands.nodeId, nodeId),
        eq(nodeCommands.status, 'pending'),
        purgeOnly ? eq(nodeCommands.kind, 'purge') : undefined,
      ),
    )
    .orderBy(asc(nodeCommands.createdAt), asc(nodeCommands.id))
    .limit(20);
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    action: r.action,
    payload: r.payload,
    signature: r.signature,
    createdAt: r.createdAt.toISOString(),
  }));
}

/** Ack or refuse: final for the command; the same answer again is accepted, another is CONFLICT. */
function finishCommandRoute(outcome: 'acked' | 'refused') {
  agentRouter.openapi(
    createRoute({
      method: 'post',
      path: `/v1/agent/commands/{id}/${outcome === 'acked' ? 'ack' : 'refuse'}`,
      summary:
        outcome === 'acked'
          ? 'The agent carried the command out'
          : 'The agent cannot or will not carry it out',
      request: {
        params: z.object({ id: idOf('cmd') }),
        ...jsonBody(
          outcome === 'refused' ? z.strictObject({ reason }) : z.strictObject({}),
          outcome === 'refused',
        ),
      },
      responses: {
        200: json(CommandSchema.extend({ status: z.string() }), 'the command'),
        ...errorResponses,
      },
    }),
    async (c) => {
      const node = requireAgent(c.get('principal'), c.get('agentNode'), { purgeOnly: true });
      const id = c.req.valid('param').id;
      const body = c.req.valid('json') as { reason?: string };
      const { db, temporal } = c.get('deps');
      const { command, changed } = await finishCommand(db, node, id, outcome, body.reason ?? null);
      if (changed && command.kind === 'purge') {
        await signalIfRunning(temporal, purgeWorkflowId(node.id), purgeAnsweredSignal.name);
      }
      // A refused rung escalates now, not at the attempt's deadline (minutes later).
      if (changed && command.kind === 'remediate') {
        await signalIfRunning(temporal, remediationWorkflowId(node.id), remediationWakeSignal.name);
      }
      return c.json(
        {
          id: command.id,
          kind: command.kind,
          action: command.action,
          payload: command.payload,
          signature: command.signature,
          createdAt: command.createdAt.toISOString(),
          status: command.status,
        },
        200,
      );
    },
  );
}

finishCommandRoute('acked');
finishCommandRoute('refused');

function assertEd25519(pem: string): void {
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType === 'ed25519') return;
  } catch {
    // fall through: not a key at all
  }
  throw new DrydockError(
    'INVALID_INPUT',
    'publicKey must be an Ed25519 public key in PEM (SubjectPublicKeyInfo)',
  );
}

/**
 * Records the node's answer to one of its commands, in one transaction; a purge refusal also
 * appends `node.purge.refused` with the reason. The same answer again changes nothing.
 */
async function finishCommand(
  db: Db,
  node: NodeRow,
  id: string,
  outcome: 'acked' | 'refused',
  reason: string | null,
) {
  return db.transaction(async (tx) => {
    const [command] = await tx
      .select()
      .from(nodeCommands)
      .where(and(eq(nodeCommands.id, id), eq(nodeCommands.nodeId, node.id)))
      .for('update');
    if (!command || (node.access === 'blocked' && command.kind !== 'purge')) {
      throw new DrydockError('NOT_FOUND', `command ${id} not found`, { commandId: id });
    }
    if (command.status !== 'pending') {
      if (command.status === outcome) return { command, changed: false };
      throw new DrydockError('INVALID_STATE', `command ${id} is already ${command.status}`, {
        status: command.status,
      });
    }
    const [updated] = await tx
      .update(nodeCommands)
      .set({ status: outcome, finishedAt: sql`now()`, refuseReason: reason })
      .where(eq(nodeCommands.id, id))
      .returning();
    if (command.kind === 'purge' && outcome === 'refused') {
      await appendEvent(tx, {
        nodeId: node.id,
        tenantId: node.tenantId,
        type: 'node.purge.refused',
        actor: `node:${node.id}`,
        reason,
        operationId: command.operationId,
        data: { commandId: id },
      });
    }
    return { command: updated!, changed: true };
  });
}
