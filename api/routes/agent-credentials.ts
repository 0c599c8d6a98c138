import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { requireAgent } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, json, jsonBody } from '../schemas';
import { credentialNonce, renewNodeCredential } from '../services/agent-identity';

const nonceRoute = createRoute({
  method: 'post',
  path: '/v1/agent/credentials/nonce',
  operationId: 'requestRenewalNonce',
  tags: ['agent'],
  summary: 'A nonce for the node to sign with its key and renew its credential with (good for 60 s)',
  request: jsonBody(z.strictObject({})),
  responses: {
    200: json(z.object({ nonce: z.string(), expiresAt: z.string() }), 'the nonce to sign'),
    ...errorResponses,
  },
});

const renewRoute = createRoute({
  method: 'post',
  path: '/v1/agent/credentials/renew',
  operationId: 'renewCredential',
  tags: ['agent'],
  summary:
    "Renew the node credential: the nonce signed with the node's Ed25519 key; the old credential ends when the new one is first used (or 10 min on)",
  request: jsonBody(
    z.strictObject({
      nonce: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'the nonce as POST /v1/agent/credentials/nonce gave it'),
      signature: z
        .string()
        .regex(/^[A-Za-z0-9+/]{86}==$/, 'an Ed25519 signature, base64')
        .openapi({
          description:
            'Ed25519 over the UTF-8 of `drydock-credential-renewal\\n<clusterId>\\n<nodeId>\\n<nonce>`, base64',
        }),
    }),
    true,
  ),
  responses: {
    201: json(
      z.object({ nodeId: z.string(), credential: z.string(), expiresAt: z.string() }),
      'the new credential, shown once',
    ),
    ...errorResponses,
  },
});

/** A node renews its credential with proof it holds its key (docs/lifecycle/enrollment.md#credential-renewal). */
export function agentCredentialRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  // A pending node renews too (it may wait days for approval), and a blocked one (its purge comes
  // over this identity).
  const agent = { beforeAdmission: true, purgeOnly: true };

  router.openapi(nonceRoute, async (c) => {
    const principal = c.get('principal');
    requireAgent(principal, c.get('agentNode'), agent);
    const { nonce, expiresAt } = await credentialNonce(c.get('deps'), credentialIdOf(principal));
    return c.json({ nonce, expiresAt: expiresAt.toISOString() }, 200);
  });

  router.openapi(renewRoute, async (c) => {
    const principal = c.get('principal');
    const node = requireAgent(principal, c.get('agentNode'), agent);
    const renewed = await renewNodeCredential(c.get('deps'), {
      node,
      credentialId: credentialIdOf(principal),
      ...c.req.valid('json'),
    });
    return c.json(
      { nodeId: node.id, credential: renewed.credential, expiresAt: renewed.expiresAt.toISOString() },
      201,
    );
  });
  return router;
}

/** `requireAgent` has made sure the principal is a node's. */
function credentialIdOf(principal: AppEnv['Variables']['principal']): string {
  return (principal as Extract<typeof principal, { kind: 'node' }>).credentialId;
}
