import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { accelerators, joinTokens, storageRoots } from '../../db/schema';
import { createToken, join, newPublicKey } from '../support/agents';
import { heartbeat, readNode } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('agent join', () => {
  it('with a token: a new node in the token pool, adopted, with inventory, labels and a credential', async () => {
    await seedPool(h, { id: 'pool-j', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-j', labels: { team: 'data' } });
    const reply = await join(h, {
      token: token.secret,
      hostname: 'gpu-j-01',
      inventory: {
        accelerators: [
          { model: 'H100', serial: 'S1' },
          { model: 'H100', serial: 'S2' },
        ],
        storageRoots: [{ path: '/var/lib/drydock', bytes: 1_000_000 }],
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      nodeId: expect.stringMatching(/^node_/),
      credential: expect.stringMatching(/^ddn_/),
      clusterId: expect.stringMatching(/^test-cluster-/),
      caPublicKey: h.ca.publicKeyPem,
      provisionState: 'adopted',
    });
    const node = await readNode(h, reply.body.nodeId);
    expect(node).toMatchObject({
      poolId: 'pool-j',
      tenantId: 'acme',
      hostname: 'gpu-j-01',
      provisionState: 'adopted',
    });
    expect(node.labels).toEqual([
      { key: 'gpu.count', value: '2', source: 'inventory' },
      { key: 'gpu.model', value: 'H100', source: 'inventory' },
      { key: 'team', value: 'data', source: 'operator' },
    ]);
    expect(await h.db.select().from(accelerators).where(eq(accelerators.nodeId, node.id))).toHaveLength(2);
    expect(await h.db.select().from(storageRoots).where(eq(storageRoots.nodeId, node.id))).toHaveLength(1);
    expect((await eventsOf(h, node.id)).map((e) => e.type)).toEqual(['node.adopting', 'node.adopted']);
    // The credential works on agent routes.
    const beat = await heartbeat(h, reply.body.credential);
    expect(beat.status).toBe(200);
  });

  it('without a token: pending with no pool, seen only by operators, until approved or rejected', async () => {
    await seedPool(h, { id: 'pool-p', tenantId: 'acme' });
    const pending = await join(h, { hostname: 'laptop-1', poolId: 'pool-p' });
    expect(pending.body.provisionState).toBe('pending');
    const node = await readNode(h, pending.body.nodeId);
    expect(node).toMatchObject({ provisionState: 'pending', poolId: null, requestedPoolId: 'pool-p' });
    const approved = await call(h, 'POST', `/v1/nodes/${node.id}/approve`, { body: {} });
    expect(approved.body).toMatchObject({ provisionState: 'adopted', poolId: 'pool-p', tenantId: 'acme' });
    expect((await eventsOf(h, node.id)).map((e) => e.type)).toEqual(['node.approved', 'node.adopted']);

    const other = await join(h, { hostname: 'laptop-2' });
    expect((await readNode(h, other.body.nodeId)).requestedPoolId).toBeNull();
    expect((await call(h, 'POST', `/v1/nodes/${other.body.nodeId}/approve`, { body: {} })).status).toBe(400);
    const rejected = await call(h, 'POST', `/v1/nodes/${other.body.nodeId}/reject`);
    expect(rejected.body.provisionState).toBe('rejected');
    expect(
      (await call(h, 'POST', `/v1/nodes/${other.body.nodeId}/approve`, { body: { poolId: 'pool-p' } }))
        .status,
    ).toBe(409);
  });

  it('refuses expired, revoked and used-up tokens with 401, and reused public keys', async () => {
    await seedPool(h, { id: 'pool-x', tenantId: 'acme' });
    const once = await createToken(h, { poolId: 'pool-x', maxUses: 1 });
    expect((await join(h, { token: once.secret })).status).toBe(201);
    expect((await join(h, { token: once.secret })).status).toBe(401);
    const revoked = await createToken(h, { poolId: 'pool-x' });
    await call(h, 'DELETE', `/v1/tokens/${revoked.id}`);
    expect((await join(h, { token: revoked.secret })).status).toBe(401);
    const expired = await createToken(h, { poolId: 'pool-x' });
    await h.db
      .update(joinTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(joinTokens.id, expired.id));
    expect((await join(h, { token: expired.secret })).status).toBe(401);
    expect((await join(h, { token: 'ddj_nope' })).status).toBe(401);

    const key = newPublicKey();
    const open = await createToken(h, { poolId: 'pool-x' });
    expect((await join(h, { token: open.secret, publicKey: key })).status).toBe(201);
    expect((await join(h, { token: open.secret, publicKey: key })).status).toBe(401);
  });

  it('one use left admits exactly one of ten racing joins', async () => {
    await seedPool(h, { id: 'pool-race', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-race', maxUses: 3 });
    await join(h, { token: token.secret });
    await join(h, { token: token.secret });
    const replies = await Promise.all(Array.from({ length: 10 }, () => join(h, { token: token.secret })));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 401)).toHaveLength(9);
    const [stored] = await h.db.select().from(joinTokens).where(eq(joinTokens.id, token.id));
    expect(stored?.uses).toBe(3);
    expect((await call(h, 'GET', '/v1/nodes?poolId=pool-race')).body.items).toHaveLength(3);
  });

  it('validates the join body', async () => {
    for (const body of [
      {},
      { hostname: 'h', publicKey: 'not a key' },
      { hostname: '-bad', publicKey: newPublicKey() },
      { hostname: 'h', publicKey: newPublicKey(), extra: 1 },
      {
        hostname: 'h',
        publicKey: newPublicKey(),
        inventory: { accelerators: [{ model: 'H100' }], storageRoots: [] },
      },
    ]) {
      const reply = await call(h, 'POST', '/v1/agent/join', { token: null, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
    }
    // An RSA key is well-formed PEM but not Ed25519.
    const { generateKeyPairSync } = await import('node:crypto');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    expect(
      (await call(h, 'POST', '/v1/agent/join', { token: null, body: { hostname: 'h', publicKey: rsa } }))
        .status,
    ).toBe(400);
  });
});
