import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { createAppDeps } from '../../api/deps';
import { createDb } from '../../db/client';
import { newId } from '../../domain/ids';
import { nodeCertificates, nodeCommands } from '../../db/schema';
import { join, newPublicKey, createToken } from '../support/agents';
import { bearer, heartbeat, joinedPoolNode, placeAllocation, readNode } from '../support/builders';
import { allocate, call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { longPollWaiting } from '../support/witnesses';

const h = useHarness({ worker: false });

async function poll(app: ReturnType<typeof createApp>, credential: string, wait = 30) {
  const started = Date.now();
  const response = await app.request(`/v1/agent/commands?wait=${wait}`, {
    headers: bearer(credential),
  });
  return { status: response.status, body: await response.json(), ms: Date.now() - started };
}

/** A second API process on the same database: it learns of changes only through NOTIFY. */
async function otherApiProcess() {
  const { db, sql, close } = createDb(h.databaseUrl);
  const services = createAppDeps({
    db,
    sql,
    clusterId: 'other',
    caPrivateKey: h.ca.privateKey,
    caPublicKeyPem: h.ca.publicKeyPem,
  });
  await services.start();
  return {
    app: createApp(services.deps),
    wakeups: services.deps.wakeups,
    close: async () => (await services.stop(), await close()),
  };
}

describe('block and unblock', () => {
  it("closes the agent's open long-poll within two seconds, on another API process too, and refuses its calls", async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-b');
    const alloc = await allocate(h, nodeId, 'acme');
    const other = await otherApiProcess();
    try {
      const here = poll(h.app, credential);
      const there = poll(other.app, credential);
      await longPollWaiting(h.deps.wakeups, nodeId);
      await longPollWaiting(other.wakeups, nodeId);
      const blocked = await call(h, 'POST', `/v1/nodes/${nodeId}/block`, { body: { reason: 'lost laptop' } });
      expect(blocked.body).toMatchObject({ access: 'blocked' });
      for (const closed of await Promise.all([here, there])) {
        expect(closed.status).toBe(403);
        expect(closed.ms).toBeLessThan(2_300);
      }
      const beat = await heartbeat(h, credential);
      expect(beat.status).toBe(403);
      expect((await poll(other.app, credential, 0)).status).toBe(403);
    } finally {
      await other.close();
    }
    // Out of placement; its allocation stays; the event has the reason.
    const placed = await placeAllocation(h, nodeId);
    expect(placed.body.error.details.reasons).toContain('blocked');
    expect((await readNode(h, nodeId)).access).toBe('blocked');
    const allocation = await call(h, 'POST', `/v1/allocations/${alloc}/release`);
    expect(allocation.body.releasedAt).toEqual(expect.any(String));
    expect(await eventsOf(h, nodeId, 'node.blocked')).toMatchObject([{ reason: 'lost laptop' }]);

    const unblocked = await call(h, 'POST', `/v1/nodes/${nodeId}/unblock`);
    expect(unblocked.body.access).toBe('allowed');
    expect((await heartbeat(h, credential)).status).toBe(200);
    expect(await eventsOf(h, nodeId, 'node.unblocked')).toHaveLength(1);
    // Blocking twice changes nothing; block needs a reason.
    await call(h, 'POST', `/v1/nodes/${nodeId}/block`, { body: { reason: 'again' } });
    const twice = await call(h, 'POST', `/v1/nodes/${nodeId}/block`, { body: { reason: 'again' } });
    expect(await eventsOf(h, nodeId, 'node.blocked')).toHaveLength(2);
    expect(twice.status).toBe(200);
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/unblock`)).status).toBe(200);
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/block`, { body: {} })).status).toBe(400);
  });
});

describe('revoke identity', () => {
  it('revokes certificates and credentials, raises the generation, and closes the session within a second', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-r');
    const open = poll(h.app, credential);
    await longPollWaiting(h.deps.wakeups, nodeId);
    const revoked = await call(h, 'POST', `/v1/nodes/${nodeId}/revoke-identity`, {
      body: { reason: 'key leaked' },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ revokedCertificates: 1, node: { identityGeneration: 2 } });
    const closed = await open;
    expect(closed.status).toBe(401);
    expect(closed.ms).toBeLessThan(1_300);
    expect((await heartbeat(h, credential)).status).toBe(401);
    const certs = await h.db.select().from(nodeCertificates).where(eq(nodeCertificates.nodeId, nodeId));
    expect(certs).toMatchObject([{ revokedReason: 'key leaked' }]);
    expect(await eventsOf(h, nodeId, 'security.')).toMatchObject([
      { type: 'security.node.identity-revoked', reason: 'key leaked', data: { revokedCertificates: 1 } },
    ]);
    // Revoking again finds nothing live: it changes nothing and writes no event.
    const again = await call(h, 'POST', `/v1/nodes/${nodeId}/revoke-identity`, {
      body: { reason: 'asked twice' },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      revokedCertificates: 0,
      node: { identityGeneration: 2, version: revoked.body.node.version },
    });
    expect(await eventsOf(h, nodeId, 'security.')).toHaveLength(1);
    const reasons = await h.db.select().from(nodeCertificates).where(eq(nodeCertificates.nodeId, nodeId));
    expect(reasons).toMatchObject([{ revokedReason: 'key leaked' }]);
  });

  it('the revoked key cannot join again; a fresh key can', async () => {
    await seedPool(h, { id: 'pool-r', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-r' });
    const key = newPublicKey();
    const first = await join(h, { token: token.secret, publicKey: key });
    await call(h, 'POST', `/v1/nodes/${first.body.nodeId}/revoke-identity`);
    expect((await join(h, { token: token.secret, publicKey: key })).status).toBe(401);
    expect((await join(h, { token: token.secret })).status).toBe(201);
  });
});

describe('delete revokes the identity', () => {
  it('credentials 401, pending commands cancelled, the old key refused', async () => {
    await seedPool(h, { id: 'pool-d', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-d' });
    const key = newPublicKey();
    const joined = await join(h, { token: token.secret, publicKey: key });
    const { nodeId, credential } = joined.body;
    await h.db.insert(nodeCommands).values({ id: newId('cmd'), nodeId, kind: 'remediate', action: 'reboot' });
    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`);
    expect((await call(h, 'DELETE', `/v1/nodes/${nodeId}`)).body.deleted).toBe(true);
    expect((await heartbeat(h, credential)).status).toBe(401);
    const commands = await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, nodeId));
    expect(commands.map((c) => c.status)).toEqual(['cancelled']);
    const certs = await h.db
      .select()
      .from(nodeCertificates)
      .where(and(eq(nodeCertificates.nodeId, nodeId), eq(nodeCertificates.revokedReason, 'node-deleted')));
    expect(certs).toHaveLength(1);
    expect((await join(h, { token: token.secret, publicKey: key })).status).toBe(401);
  });
});
