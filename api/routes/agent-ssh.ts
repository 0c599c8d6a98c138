import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { sshPrincipalOf } from '../../domain/ssh-certificates';
import { revokedSshSerials } from '../../db/queries/ssh-certificates';
import { requireAgent } from '../auth';
import type { AppEnv } from '../env';
import { errorResponses, json } from '../schemas';

const sshRoute = createRoute({
  method: 'get',
  path: '/v1/agent/ssh',
  operationId: 'getAgentSsh',
  tags: ['agent'],
  summary:
    "What the node's sshd needs for break-glass SSH: the SSH CA's public key, the node's principal, the revoked serials",
  responses: {
    200: json(
      z.object({
        caPublicKey: z
          .string()
          .openapi({ description: "the SSH CA's public key, one OpenSSH line (TrustedUserCAKeys)" }),
        principal: z
          .string()
          .openapi({ description: 'the one principal this node takes (AuthorizedPrincipalsFile)' }),
        revokedSerials: z.array(z.number().int()).openapi({
          description: 'serials of revoked certificates not yet expired, for the KRL (RevokedKeys)',
        }),
      }),
      "the node's SSH trust",
    ),
    ...errorResponses,
  },
});

/** The agent's side of break-glass SSH (docs/security.md#break-glass-ssh). */
export function agentSshRoutes(): OpenAPIHono<AppEnv> {
  const router = new OpenAPIHono<AppEnv>();
  router.openapi(sshRoute, async (c) => {
    const node = requireAgent(c.get('principal'), c.get('agentNode'));
    const deps = c.get('deps');
    return c.json(
      {
        caPublicKey: deps.sshCa.publicKey,
        principal: sshPrincipalOf(node.id),
        revokedSerials: await revokedSshSerials(deps.db, node.id, new Date()),
      },
      200,
    );
  });
  return router;
}
