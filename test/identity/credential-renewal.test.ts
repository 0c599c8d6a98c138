import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { renewalMessage } from '../../domain/credentials';
import { nodeCertificates, nodeCredentials } from '../../db/schema';
import { createToken, join } from '../support/agents';
import { heartbeat } from '../support/builders';
import { call, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

/** A node joined with a key this test holds, as an agent holds its node.key. */
async function keyedNode(poolId: string, policy: Record<string, unknown> = {}) {
  await seedPool(h, { id: poolId, tenantId: 'acme', policy });
  const token = await createToken(h, { poolId });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const reply = await join(h, {
    token: token.secret,
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
  expect(reply.status).toBe(201);
  return {
    nodeId: reply.body.nodeId as string,
    credential: reply.body.credential as string,
    credentialExpiresAt: reply.body.credentialExpiresAt as string,
    privateKey,
  };
}

const nonceFor = (credential: string) =>
  call(h, 'POST', '/v1/agent/credentials/nonce', { token: credential, body: {} });

function signed(nodeId: string, nonce: string, key: KeyObject) {
  return sign(null, renewalMessage({ clusterId: h.deps.clusterId, nodeId, nonce }), key).toString('base64');
}

/** Renews as the agent does: a nonce, signed with `key`, sent back. */
async function renew(node: { nodeId: string; credential: string }, key: KeyObject) {
  const { nonce } = (await nonceFor(node.credential)).body as { nonce: string };
  return call(h, 'POST', '/v1/agent/credentials/renew', {
    token: node.credential,
    body: { nonce, signature: signed(node.nodeId, nonce, key) },
  });
}

describe('node credential renewal', () => {
  it("a credential lives the pool's credentialTtl, and the heartbeat says when to renew it", async () => {
    const node = await keyedNode('pool-ttl', { credentialTtl: '6h' });
    const lifetime = Date.parse(node.credentialExpiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(6 * 3_600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(6 * 3_600_000);
    const beat = await heartbeat(h, node.credential);
    expect(beat.status).toBe(200);
    expect(beat.body.credential.expiresAt).toBe(node.credentialExpiresAt);
    // Two thirds in: four hours after it was issued.
    const renewIn = Date.parse(beat.body.credential.renewAfter) - Date.now();
    expect(renewIn).toBeGreaterThan(4 * 3_600_000 - 60_000);
    expect(renewIn).toBeLessThanOrEqual(4 * 3_600_000);
  });

  it('renews with a signed nonce; the old credential works until the new one is first used', async () => {
    const node = await keyedNode('pool-renew');
    const renewed = await renew(node, node.privateKey);
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(201);
    expect(renewed.body.nodeId).toBe(node.nodeId);
    const next = renewed.body.credential as string;
    expect(next).toMatch(/^ddn_/);
    expect(next).not.toBe(node.credential);

    // Until the new one is used, both work.
    expect((await heartbeat(h, node.credential)).status).toBe(200);
    expect((await heartbeat(h, next)).status).toBe(200);
    const old = await heartbeat(h, node.credential);
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('UNAUTHENTICATED');
    expect((await heartbeat(h, next)).status).toBe(200);

    const rows = await h.db.select().from(nodeCredentials).where(eq(nodeCredentials.nodeId, node.nodeId));
    expect(rows.map((r) => r.revokedReason).sort()).toEqual([null, 'renewed']);
    // A new certificate of the same key with it; the one it renewed is no longer live.
    const certificates = await h.db
      .select()
      .from(nodeCertificates)
      .where(eq(nodeCertificates.nodeId, node.nodeId));
    expect(certificates).toHaveLength(2);
    expect(new Set(certificates.map((c) => c.publicKey)).size).toBe(1);
    expect(certificates.filter((c) => c.revokedAt === null)).toHaveLength(1);
  });

  it('an answer the agent never got: renewing again revokes the successor never used', async () => {
    const node = await keyedNode('pool-lost');
    const lost = (await renew(node, node.privateKey)).body.credential as string;
    const second = await renew(node, node.privateKey);
    expect(second.status).toBe(201);
    expect((await heartbeat(h, lost)).status).toBe(401);
    expect((await heartbeat(h, second.body.credential as string)).status).toBe(200);
  });

  it('refuses a signature by another key, a nonce spent or never handed out, and a revoked identity', async () => {
    const node = await keyedNode('pool-refuse');
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const forged = await renew(node, stranger);
    expect(forged.status).toBe(401);
    expect(forged.body.error.message).toMatch(/does not verify with the node's key/);

    const { nonce } = (await nonceFor(node.credential)).body as { nonce: string };
    const body = { nonce, signature: signed(node.nodeId, nonce, node.privateKey) };
    const first = await call(h, 'POST', '/v1/agent/credentials/renew', { token: node.credential, body });
    expect(first.status).toBe(201);
    const replay = await call(h, 'POST', '/v1/agent/credentials/renew', { token: node.credential, body });
    expect(replay.status).toBe(400);
    expect(replay.body.error.message).toMatch(/ask for a new one/);

    // Signed for another node: the signature binds the node id.
    const other = await keyedNode('pool-refuse');
    const { nonce: otherNonce } = (await nonceFor(other.credential)).body as { nonce: string };
    const crossed = await call(h, 'POST', '/v1/agent/credentials/renew', {
      token: other.credential,
      body: { nonce: otherNonce, signature: signed(node.nodeId, otherNonce, other.privateKey) },
    });
    expect(crossed.status).toBe(401);

    // A stolen key and credential cannot renew once the identity is revoked.
    const revoked = await call(h, 'POST', `/v1/nodes/${other.nodeId}/revoke-identity`, {
      body: { reason: 'stolen' },
    });
    expect(revoked.status).toBe(200);
    const after = await nonceFor(other.credential);
    expect(after.status).toBe(401);
    const credentials = await h.db
      .select()
      .from(nodeCredentials)
      .where(eq(nodeCredentials.nodeId, other.nodeId));
    expect(credentials.every((c) => c.revokedAt !== null)).toBe(true);
  });

  it('a credential past its end answers 401 CREDENTIAL_EXPIRED on every agent route, saying what to do', async () => {
    const node = await keyedNode('pool-expired');
    // Its end moved into the past, as a day off the network would: the API reads the change at once.
    await h.db
      .update(nodeCredentials)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(nodeCredentials.nodeId, node.nodeId));
    for (const reply of [
      await heartbeat(h, node.credential),
      await call(h, 'GET', '/v1/agent/commands?wait=0', { token: node.credential }),
      await nonceFor(node.credential),
    ]) {
      expect(reply.status).toBe(401);
      expect(reply.body.error.code).toBe('CREDENTIAL_EXPIRED');
      expect(reply.body.error.message).toMatch(
        /expired at .*join(s)? again \(drydock-agent join --reset --yes\)/,
      );
      expect(reply.body.error.details).toMatchObject({ nodeId: node.nodeId });
    }
  });

  it('refuses bad renewal bodies in the error envelope, changing nothing', async () => {
    const node = await keyedNode('pool-bodies');
    for (const body of [
      {},
      { nonce: 'short', signature: 'x' },
      { nonce: 'a'.repeat(43), signature: 'not base64!' },
      { nonce: 'a'.repeat(43), signature: `${'A'.repeat(86)}==`, extra: 1 },
    ]) {
      const reply = await call(h, 'POST', '/v1/agent/credentials/renew', { token: node.credential, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    const rows = await h.db.select().from(nodeCredentials).where(eq(nodeCredentials.nodeId, node.nodeId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.revokedAt).toBeNull();
    // An API key has no credential to renew.
    expect((await call(h, 'POST', '/v1/agent/credentials/nonce', { body: {} })).status).toBe(403);
  });
});
