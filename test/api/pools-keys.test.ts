import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { call, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('pools', () => {
  it('operators create pools; tenants see their own and granted ones', async () => {
    const created = await call(h, 'POST', '/v1/pools', {
      body: {
        id: 'pool-h100',
        kind: 'bare-metal',
        siteId: 'fra1',
        tenantId: 'acme',
        policy: { maxUnavailable: '25%' },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'pool-h100',
      kind: 'bare-metal',
      tenantId: 'acme',
      grants: [],
      policy: { maxUnavailable: '25%' },
    });
    await call(h, 'POST', '/v1/pools', {
      body: {
        id: 'pool-cloud',
        kind: 'provider',
        siteId: 'ams2',
        tenantId: 'globex',
        grants: ['acme'],
        policy: { lostAfter: '10m', maxUnhealthy: 3 },
      },
    });
    await call(h, 'POST', '/v1/pools', {
      body: { id: 'pool-private', kind: 'vps-host', siteId: 'ams2', tenantId: 'globex' },
    });

    const dup = await call(h, 'POST', '/v1/pools', {
      body: { id: 'pool-h100', kind: 'bare-metal', siteId: 'fra1' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');

    const key = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-reader');
    const list = await call(h, 'GET', '/v1/pools', { token: key.secret });
    expect(list.body.items.map((p: { id: string }) => p.id)).toEqual(['pool-cloud', 'pool-h100']);
    expect((await call(h, 'GET', '/v1/pools/pool-cloud', { token: key.secret })).status).toBe(200);
    expect((await call(h, 'GET', '/v1/pools/pool-private', { token: key.secret })).status).toBe(404);
    expect((await call(h, 'GET', '/v1/pools/pool-private')).status).toBe(200);
    expect(
      (
        await call(h, 'POST', '/v1/pools', {
          token: key.secret,
          body: { id: 'pool-t', kind: 'bare-metal', siteId: 'fra1' },
        })
      ).status,
    ).toBe(403);
    expect((await call(h, 'GET', '/v1/pools/pool-t')).status).toBe(404);
  });

  it('validates pools', async () => {
    for (const body of [
      { id: 'Pool', kind: 'bare-metal', siteId: 'fra1' },
      { id: 'p1', kind: 'mainframe', siteId: 'fra1' },
      { id: 'p1', kind: 'provider' },
      { id: 'p1', kind: 'provider', siteId: 'fra1', policy: { lostAfter: 'later' } },
      { id: 'p1', kind: 'provider', siteId: 'fra1', policy: { maxUnhealthy: '140%' } },
      { id: 'p1', kind: 'provider', siteId: 'fra1', policy: { surprise: 1 } },
      { id: 'x'.repeat(64), kind: 'provider', siteId: 'fra1' },
    ]) {
      const reply = await call(h, 'POST', '/v1/pools', { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(h, 'GET', '/v1/pools/NOPE')).status).toBe(400);
  });
});

describe('keys', () => {
  it('creates tenant and operator keys, shows secrets once, and revokes them', async () => {
    const tenant = await call(h, 'POST', '/v1/keys', {
      body: { name: 'ci-runner', tenantId: 'acme', actions: ['compute:nodes:read', 'compute:nodes:read'] },
    });
    expect(tenant.status).toBe(201);
    expect(tenant.body).toMatchObject({
      name: 'ci-runner',
      tenantId: 'acme',
      actions: ['compute:nodes:read'],
      revokedAt: null,
    });
    expect(tenant.body.secret).toMatch(/^ddk_/);
    const operator = await call(h, 'POST', '/v1/keys', { body: { name: 'ops-admin' } });
    expect(operator.body.tenantId).toBeNull();

    const list = await call(h, 'GET', '/v1/keys');
    expect(JSON.stringify(list.body)).not.toContain(tenant.body.secret);
    expect(list.body.items.map((k: { name: string }) => k.name)).toEqual(
      expect.arrayContaining(['ci-runner', 'ops-admin']),
    );

    // The new operator key works as an operator, and its name is the actor.
    expect((await call(h, 'GET', '/v1/keys', { token: operator.body.secret })).status).toBe(200);
    expect((await call(h, 'GET', '/v1/nodes', { token: tenant.body.secret })).status).toBe(200);
    const revoked = await call(h, 'DELETE', `/v1/keys/${tenant.body.id}`);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await call(h, 'GET', '/v1/nodes', { token: tenant.body.secret })).status).toBe(401);
    const again = await call(h, 'DELETE', `/v1/keys/${tenant.body.id}`);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  it('is for operators only, and validates input', async () => {
    const key = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:tokens:write'], 'not-admin');
    expect((await call(h, 'GET', '/v1/keys', { token: key.secret })).status).toBe(403);
    expect(
      (await call(h, 'POST', '/v1/keys', { token: key.secret, body: { name: 'escalate' } })).status,
    ).toBe(403);
    expect((await call(h, 'DELETE', `/v1/keys/${key.id}`, { token: key.secret })).status).toBe(403);
    for (const body of [
      { name: 'x', tenantId: 'acme', actions: ['compute:everything'] },
      { name: 'x', tenantId: 'acme' },
      { name: 'x', actions: ['compute:nodes:read'] },
      { name: 'Bad Name' },
      {},
    ]) {
      expect((await call(h, 'POST', '/v1/keys', { body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(h, 'DELETE', `/v1/keys/${newId('key')}`)).status).toBe(404);
    expect((await call(h, 'DELETE', '/v1/keys/key_1')).status).toBe(400);
  });
});
