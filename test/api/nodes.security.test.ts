import { describe, expect, it } from 'vitest';
import { readNode, seedPoolNode } from '../support/builders';
import { call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('nodes: security', () => {
  it('refuses missing, malformed, unknown and revoked credentials with 401', async () => {
    const id = await seedPoolNode(h, 'pool-s');
    const key = await tenantKey(h, 'acme', ['compute:nodes:read']);
    await call(h, 'DELETE', `/v1/keys/${key.id}`);
    for (const authorization of [
      null,
      'Basic abc',
      'Bearer',
      'Bearer not-a-key',
      `Bearer ${key.secret}`,
      `bearer ${h.operatorKey}`,
    ]) {
      const headers = authorization ? { authorization } : undefined;
      const reply = await call(h, 'GET', `/v1/nodes/${id}`, { token: null, headers });
      expect(reply.status, String(authorization)).toBe(401);
      expect(reply.body.error.code).toBe('UNAUTHENTICATED');
    }
    const cordon = await call(h, 'POST', `/v1/nodes/${id}/cordon`, { token: 'wrong' });
    expect(cordon.status).toBe(401);
    expect(await eventsOf(h, id)).toEqual([]);
  });

  it('a tenant key sees only its own and granted pools; others are NOT_FOUND', async () => {
    await seedPool(h, { id: 'pool-own', tenantId: 'umbrella' });
    await seedPool(h, { id: 'pool-granted', tenantId: 'globex', grants: ['umbrella'] });
    await seedPool(h, { id: 'pool-foreign', tenantId: 'globex' });
    const own = await seedNode(h, { poolId: 'pool-own', tenantId: 'umbrella' });
    const granted = await seedNode(h, { poolId: 'pool-granted', tenantId: 'globex' });
    const foreign = await seedNode(h, { poolId: 'pool-foreign', tenantId: 'globex' });
    const key = await tenantKey(h, 'umbrella', [
      'compute:nodes:read',
      'compute:nodes:cordon',
      'compute:nodes:drain',
    ]);

    const list = await call(h, 'GET', '/v1/nodes', { token: key.secret });
    expect(list.body.items.map((n: { id: string }) => n.id).sort()).toEqual([own, granted].sort());
    const filtered = await call(h, 'GET', '/v1/nodes?tenantId=globex', { token: key.secret });
    expect(filtered.body.items.map((n: { id: string }) => n.id)).toEqual([granted]);

    expect((await call(h, 'GET', `/v1/nodes/${granted}`, { token: key.secret })).status).toBe(200);
    for (const [method, path] of [
      ['GET', `/v1/nodes/${foreign}`],
      ['GET', `/v1/nodes/${foreign}/events`],
      ['POST', `/v1/nodes/${foreign}/cordon`],
      ['POST', `/v1/nodes/${foreign}/uncordon`],
      ['POST', `/v1/nodes/${foreign}/drain`],
    ] as const) {
      const reply = await call(h, method, path, { token: key.secret });
      expect(reply.status, path).toBe(404);
      expect(reply.body.error.code).toBe('NOT_FOUND');
    }
    expect(await readNode(h, foreign)).toMatchObject({
      cordoned: false,
      version: 1,
    });
    const cordoned = await call(h, 'POST', `/v1/nodes/${own}/cordon`, { token: key.secret });
    expect(cordoned.status).toBe(200);
    expect((await eventsOf(h, own))[0]).toMatchObject({ actor: 'key:t-umbrella' });
  });

  it('a tenant key without the action is FORBIDDEN, and nothing changes', async () => {
    const id = await seedPoolNode(h, 'pool-f', 'initech');
    const reader = await tenantKey(h, 'initech', ['compute:nodes:read'], 'reader');
    for (const path of [`/v1/nodes/${id}/cordon`, `/v1/nodes/${id}/uncordon`, `/v1/nodes/${id}/drain`]) {
      const reply = await call(h, 'POST', path, { token: reader.secret });
      expect(reply.status, path).toBe(403);
      expect(reply.body.error.code).toBe('FORBIDDEN');
    }
    const writer = await tenantKey(h, 'initech', ['compute:nodes:cordon'], 'writer');
    expect((await call(h, 'GET', '/v1/nodes', { token: writer.secret })).status).toBe(403);
    expect((await call(h, 'GET', `/v1/nodes/${id}`, { token: writer.secret })).status).toBe(403);
    expect(await readNode(h, id)).toMatchObject({ cordoned: false, version: 1 });
    expect(await eventsOf(h, id)).toEqual([]);
  });

  it('includeDeleted is for operators only', async () => {
    const key = await tenantKey(h, 'acme', ['compute:nodes:read'], 'deleted-reader');
    expect((await call(h, 'GET', '/v1/nodes?includeDeleted=true', { token: key.secret })).status).toBe(403);
    expect((await call(h, 'GET', '/v1/nodes?includeDeleted=true')).status).toBe(200);
  });

  it('health and docs need no credentials; everything under /v1 does', async () => {
    expect((await call(h, 'GET', '/healthz', { token: null })).status).toBe(200);
    const ready = await call(h, 'GET', '/readyz', { token: null });
    expect(ready).toMatchObject({
      status: 200,
      body: { status: 'ready', postgres: true, outbox: { waiting: expect.any(Number) } },
    });
    const doc = await call(h, 'GET', '/openapi.json', { token: null });
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/v1/nodes',
        '/v1/nodes/{id}',
        '/v1/nodes/{id}/drain',
        '/v1/operations/{id}',
        '/v1/keys',
      ]),
    );
    expect((await call(h, 'GET', '/docs', { token: null })).status).toBe(200);
    expect((await call(h, 'GET', '/metrics', { token: null })).body).toContain(
      'drydock_http_request_duration_seconds',
    );
    expect((await call(h, 'GET', '/v1/pools', { token: null })).status).toBe(401);
  });
});
