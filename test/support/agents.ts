import { generateKeyPairSync } from 'node:crypto';
import { call, type Reply } from './fixtures';
import type { Harness } from './harness';

/** A fresh Ed25519 public key in PEM, as an agent makes one. */
export function newPublicKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

export async function createToken(
  h: Harness,
  body: {
    poolId: string;
    ttl?: string;
    maxUses?: number;
    labels?: Record<string, string>;
    tenantId?: string;
    description?: string;
  },
) {
  const reply = await call(h, 'POST', '/v1/tokens', { body: { ttl: '1h', maxUses: 0, ...body } });
  if (reply.status !== 201) throw new Error(`token creation failed: ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string; secret: string };
}

/** Joins through the API the way the agent does; returns the reply. */
export async function join(
  h: Harness,
  body: { token?: string; hostname?: string; publicKey?: string; poolId?: string; inventory?: unknown },
): Promise<Reply> {
  return call(h, 'POST', '/v1/agent/join', {
    token: null,
    body: { hostname: `host-${Math.random().toString(36).slice(2, 8)}`, publicKey: newPublicKey(), ...body },
  });
}

/** A joined, adopted node and its credential. */
export async function joinedNode(h: Harness, poolId: string) {
  const token = await createToken(h, { poolId });
  const reply = await join(h, { token: token.secret });
  if (reply.status !== 201) throw new Error(`join failed: ${JSON.stringify(reply.body)}`);
  return { nodeId: reply.body.nodeId as string, credential: reply.body.credential as string };
}
