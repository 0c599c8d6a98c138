import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { apiKeys } from '../../db/schema';
import { joinedPoolNode } from '../support/builders';
import { call, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness({ worker: false });

const rotate = (id: string, body?: unknown, token?: string | null) =>
  call(h, 'POST', `/v1/keys/${id}/rotate`, { body, token });
const keyCount = async () => (await h.db.select({ n: count() }).from(apiKeys))[0]!.n;
const keyRow = async (id: string) => (await h.db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0]!;
/** What a caller holding `secret` gets from a route tenants and operators may both read. */
const nodesWith = async (secret: string) => (await call(h, 'GET', '/v1/nodes', { token: secret })).status;

describe('API key rotation', () => {
  it('a tenant key: a new secret with the same tenant and actions; the old one works through the grace (default one hour)', async () => {
    const old = await tenantKey(h, 'acme', ['compute:nodes:read'], 'ci-runner');
    const rotated = await rotate(old.id);
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({
      name: 'ci-runner',
      tenantId: 'acme',
      actions: ['compute:nodes:read'],
      revokedAt: null,
      secret: expect.stringMatching(/^ddk_/),
      previous: { id: old.id, name: 'ci-runner', revokedAt: expect.any(String) },
    });
    expect(rotated.body.id).not.toBe(old.id);
    expect(rotated.body.secret).not.toBe(old.secret);
    const graceEnds = Date.parse(rotated.body.previous.revokedAt) - Date.now();
    expect(graceEnds).toBeGreaterThan(3_500_000);
    expect(graceEnds).toBeLessThanOrEqual(3_600_000);

    // Both secrets work, each as the tenant key it is (no more): the new one is not an operator.
    expect(await nodesWith(rotated.body.secret)).toBe(200);
    expect(await nodesWith(old.secret)).toBe(200);
    expect((await call(h, 'GET', '/v1/keys', { token: rotated.body.secret })).status).toBe(403);
    // The list shows both and no secret; only the hash of the new one is stored.
    const list = await call(h, 'GET', '/v1/keys');
    expect(JSON.stringify(list.body)).not.toContain(rotated.body.secret);
    expect((await keyRow(rotated.body.id)).secretHash).not.toContain(rotated.body.secret);
    const listed = list.body.items.filter((k: { name: string }) => k.name === 'ci-runner');
    expect(listed.map((k: { id: string }) => k.id).sort()).toEqual([old.id, rotated.body.id].sort());
  });

  it('the old secret is refused once the grace ends; the new one stays', async () => {
    const old = await tenantKey(h, 'acme', ['compute:nodes:read'], 'short-grace');
    const rotated = await rotate(old.id, { graceSeconds: 1 });
    expect(rotated.status).toBe(201);
    expect(Date.parse(rotated.body.previous.revokedAt) - Date.now()).toBeLessThanOrEqual(1_000);
    await eventually(async () => (await nodesWith(old.secret)) === 401, 5_000);
    expect(await nodesWith(rotated.body.secret)).toBe(200);

    // graceSeconds 0: the old secret is refused from the next request on.
    const next = await rotate(rotated.body.id, { graceSeconds: 0 });
    expect(next.status).toBe(201);
    expect(await nodesWith(rotated.body.secret)).toBe(401);
    expect(await nodesWith(next.body.secret)).toBe(200);
  });

  it('an operator key rotates into an operator key', async () => {
    const created = await call(h, 'POST', '/v1/keys', { body: { name: 'ops-admin' } });
    const rotated = await rotate(created.body.id, { graceSeconds: 600 }, created.body.secret);
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({ tenantId: null, actions: [], name: 'ops-admin' });
    expect((await call(h, 'GET', '/v1/keys', { token: rotated.body.secret })).status).toBe(200);
    expect((await call(h, 'GET', '/v1/keys', { token: created.body.secret })).status).toBe(200);
  });

  it('revoking a key in its grace ends the grace at once; a rotated or revoked key cannot be rotated again', async () => {
    const old = await tenantKey(h, 'acme', ['compute:nodes:read'], 'revoke-early');
    const rotated = await rotate(old.id, { graceSeconds: 3600 });
    const before = await keyCount();
    const again = await rotate(old.id);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'INVALID_STATE', details: { keyId: old.id } });
    expect(await keyCount()).toBe(before);

    const revoked = await call(h, 'DELETE', `/v1/keys/${old.id}`);
    expect(revoked.status).toBe(200);
    expect(Date.parse(revoked.body.revokedAt)).toBeLessThanOrEqual(Date.now());
    expect(await nodesWith(old.secret)).toBe(401);
    expect(await nodesWith(rotated.body.secret)).toBe(200);
    // Revoking it again changes nothing.
    expect((await call(h, 'DELETE', `/v1/keys/${old.id}`)).body.revokedAt).toBe(revoked.body.revokedAt);
    expect((await rotate(old.id)).status).toBe(409);
    expect(await keyCount()).toBe(before);
  });

  it('concurrent rotations of one key: exactly one succeeds, one new key', async () => {
    const old = await tenantKey(h, 'acme', ['compute:nodes:read'], 'raced');
    const before = await keyCount();
    const replies = await Promise.all(Array.from({ length: 8 }, () => rotate(old.id)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(await keyCount()).toBe(before + 1);
  });

  it('is for operators only; bad input is refused and changes nothing', async () => {
    const old = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:tokens:write'], 'not-admin');
    const before = await keyCount();
    expect((await rotate(old.id, undefined, old.secret)).status).toBe(403);
    const node = await joinedPoolNode(h, 'pool-keys');
    expect((await rotate(old.id, undefined, node.credential)).status).toBe(403);
    for (const body of [
      { graceSeconds: -1 },
      { graceSeconds: 7 * 86_400 + 1 },
      { graceSeconds: 1.5 },
      { graceSeconds: '60' },
      { grace: 60 },
    ]) {
      const reply = await rotate(old.id, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await rotate('key_1')).status).toBe(400);
    expect((await rotate(newId('key'))).status).toBe(404);
    expect((await rotate(old.id, undefined, null)).status).toBe(401);
    expect(await keyCount()).toBe(before);
    expect((await keyRow(old.id)).revokedAt).toBeNull();
    expect(await nodesWith(old.secret)).toBe(200);
  });
});
