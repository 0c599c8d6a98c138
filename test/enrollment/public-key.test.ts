import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { DrydockError } from '../../domain/errors';
import { joinNode } from '../../db/join';
import { joinTokens, nodeCertificates, nodePublicKeys, nodes } from '../../db/schema';
import { createToken, join, newPublicKey } from '../support/agents';
import { heartbeat } from '../support/builders';
import { call, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

/** The same key in another PEM spelling: its base64 wrapped at `width` columns, `eol` line ends. */
function respell(pem: string, { width = 64, eol = '\n', final = true } = {}): string {
  const body = pem.replace(/-----[A-Z ]+-----|\s/g, '');
  const lines = body.match(new RegExp(`.{1,${width}}`, 'g'))!;
  const text = ['-----BEGIN PUBLIC KEY-----', ...lines, '-----END PUBLIC KEY-----'].join(eol);
  return final ? text + eol : text;
}

const SPELLINGS = {
  'without its final newline': { final: false },
  'wrapped at 20 columns': { width: 20 },
  'wrapped at 44 columns, no final newline': { width: 44, final: false },
};

async function nodesNamed(hostname: string) {
  return h.db.select({ id: nodes.id }).from(nodes).where(eq(nodes.hostname, hostname));
}

function expectKeyReused(reply: { status: number; body: any }) {
  expect(reply.status).toBe(401);
  expect(reply.body.error).toMatchObject({
    code: 'UNAUTHENTICATED',
    details: { reason: 'public-key-reused' },
  });
}

describe('a public key is its SPKI bytes, and belongs to one node ever', () => {
  it.each([
    ['revoked', (id: string) => call(h, 'POST', `/v1/nodes/${id}/revoke-identity`)],
    [
      'deleted',
      async (id: string) => {
        await call(h, 'POST', `/v1/nodes/${id}/cordon`);
        return call(h, 'DELETE', `/v1/nodes/${id}`);
      },
    ],
  ])('the key of a %s node is refused in every PEM spelling', async (state, end) => {
    await seedPool(h, { id: 'pool-k', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-k' });
    const key = newPublicKey();
    const first = await join(h, { token: token.secret, publicKey: key });
    expect(first.status).toBe(201);
    expect((await end(first.body.nodeId)).status).toBe(200);

    const hostname = `again-${state}`;
    for (const [spelling, options] of Object.entries(SPELLINGS)) {
      const pem = respell(key, options);
      expect(pem, spelling).not.toBe(key);
      expectKeyReused(await join(h, { token: token.secret, hostname, publicKey: pem }));
    }
    // CRLF line ends: the API's input rules may refuse the spelling itself; the store refuses the key.
    const crlf = respell(key, { eol: '\r\n' });
    expect([400, 401]).toContain((await join(h, { token: token.secret, hostname, publicKey: crlf })).status);
    const stored = joinNode(h.db, { token: token.secret, hostname, publicKey: crlf, inventory: none });
    await expect(stored).rejects.toThrow(DrydockError);
    await expect(stored).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      details: { reason: 'public-key-reused' },
    });

    expect(await nodesNamed(hostname)).toEqual([]);
    const [owner] = await h.db
      .select()
      .from(nodePublicKeys)
      .where(eq(nodePublicKeys.nodeId, first.body.nodeId));
    expect(owner).toBeDefined();
  });

  it('a live node keeps its key: another join with it is refused, and changes nothing', async () => {
    await seedPool(h, { id: 'pool-l', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-l' });
    const key = newPublicKey();
    const first = await join(h, { token: token.secret, publicKey: key });
    expect(first.status).toBe(201);
    expectKeyReused(
      await join(h, { token: token.secret, hostname: 'copycat', publicKey: respell(key, { width: 30 }) }),
    );
    expect(await nodesNamed('copycat')).toEqual([]);
    const beat = await heartbeat(h, first.body.credential);
    expect(beat.status).toBe(200);
  });

  it('ten concurrent joins with one key make exactly one node; the token is spent once', async () => {
    await seedPool(h, { id: 'pool-c', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-c', maxUses: 20 });
    const key = newPublicKey();
    const spellings = [key, respell(key, { final: false }), respell(key, { width: 16 })];
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        join(h, { token: token.secret, hostname: 'racer', publicKey: spellings[i % spellings.length] }),
      ),
    );
    const created = replies.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const reply of replies.filter((r) => r.status !== 201)) expectKeyReused(reply);

    const racers = await nodesNamed('racer');
    expect(racers).toEqual([{ id: created[0]!.body.nodeId }]);
    const certificates = await h.db
      .select()
      .from(nodeCertificates)
      .where(eq(nodeCertificates.nodeId, created[0]!.body.nodeId));
    expect(certificates).toHaveLength(1);
    const [spent] = await h.db.select().from(joinTokens).where(eq(joinTokens.id, token.id));
    expect(spent!.uses).toBe(1);
  });

  it('different keys join side by side', async () => {
    await seedPool(h, { id: 'pool-d', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-d' });
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => join(h, { token: token.secret, hostname: 'fleet' })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array<number>(10).fill(201));
    expect(await nodesNamed('fleet')).toHaveLength(10);
  });
});

const none = { accelerators: [], storageRoots: [] };
