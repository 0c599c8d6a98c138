import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { join as joinNode, createToken } from '../support/agents';
import { call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { userKey } from './sshd';

const h = useHarness({ worker: false });

let work: string;
let ed25519: string;
const keys: Record<string, string> = {};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'drydock-ssh-routes-'));
  ed25519 = readFileSync(`${await userKey(work, 'ed')}.pub`, 'utf8');
  for (const [name, type, bits] of [
    ['rsa3072', 'rsa', 3072],
    ['rsa1024', 'rsa', 1024],
    ['ecdsa', 'ecdsa', 256],
  ] as const) {
    keys[name] = readFileSync(`${await userKey(work, name, type, bits)}.pub`, 'utf8');
  }
  await seedPool(h, { id: 'pool-ssh', tenantId: 'acme' });
});

afterAll(() => work && rmSync(work, { recursive: true, force: true }));

const issue = (nodeId: string, body: Record<string, unknown>, token?: string) =>
  call(h, 'POST', `/v1/nodes/${nodeId}/ssh-certificates`, { body, token });

/** An adopted node with an agent credential. */
async function joined() {
  const token = await createToken(h, { poolId: 'pool-ssh' });
  const reply = await joinNode(h, { token: token.secret });
  return { nodeId: reply.body.nodeId as string, credential: reply.body.credential as string };
}

describe('POST /v1/nodes/{id}/ssh-certificates', () => {
  it('issues a certificate for the node: default 15 min, a minute back-dated, the caller and reason in its key id', async () => {
    const { nodeId } = await joined();
    const key = await tenantKey(h, 'acme', ['compute:nodes:ssh-root', 'compute:nodes:read'], 'oncall');
    const before = Date.now();
    const reply = await issue(nodeId, { publicKey: ed25519, reason: 'agent wedged' }, key.secret);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const body = reply.body;
    expect(body).toMatchObject({
      nodeId,
      principal: `drydock-node:${nodeId}`,
      keyId: `key:oncall for ${nodeId}: agent wedged`,
      issuedBy: 'key:oncall',
      reason: 'agent wedged',
      revokedAt: null,
      publicKeyFingerprint: expect.stringMatching(/^SHA256:[A-Za-z0-9+/]{43}$/),
      certificate: expect.stringMatching(/^ssh-ed25519-cert-v01@openssh\.com AAAA/),
    });
    const lifetime = Date.parse(body.validBefore) - Date.parse(body.issuedAt);
    expect(lifetime).toBe(15 * 60_000);
    expect(Date.parse(body.issuedAt) - Date.parse(body.validAfter)).toBe(60_000);
    expect(Date.parse(body.issuedAt)).toBeGreaterThanOrEqual(before - 1000);

    const [event] = await eventsOf(h, nodeId, 'security.node.ssh-certificate-issued');
    expect(event).toMatchObject({
      actor: 'key:oncall',
      reason: 'agent wedged',
      data: { serial: body.serial, keyId: body.keyId, publicKeyFingerprint: body.publicKeyFingerprint },
    });
    const listed = await call(h, 'GET', `/v1/nodes/${nodeId}/ssh-certificates`, { token: key.secret });
    expect(listed.body.items).toEqual([expect.objectContaining({ serial: body.serial })]);
    expect(listed.body.items[0]).not.toHaveProperty('certificate');
  });

  it('takes RSA of 2048 bits and more, and a ttl up to 1h', async () => {
    const { nodeId } = await joined();
    const reply = await issue(nodeId, { publicKey: keys.rsa3072, reason: 'rsa', ttl: '1h' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.certificate).toMatch(/^ssh-rsa-cert-v01@openssh\.com /);
    expect(Date.parse(reply.body.validBefore) - Date.parse(reply.body.issuedAt)).toBe(3_600_000);
  });

  it('refuses bad input with 400 INVALID_INPUT, an unknown node with 404, and records nothing', async () => {
    const { nodeId } = await joined();
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ publicKey: 'ssh-ed25519 not-base64!', reason: 'r' }, /publicKey: is not an OpenSSH public key line/],
      [
        { publicKey: '-----BEGIN PUBLIC KEY-----', reason: 'r' },
        /publicKey: is not an OpenSSH public key line/,
      ],
      [{ publicKey: `${ed25519.trim()}\n${ed25519}`, reason: 'r' }, /one line/],
      [{ publicKey: keys.ecdsa, reason: 'r' }, /publicKey: ecdsa keys are not taken; use ed25519 or rsa/],
      [{ publicKey: keys.rsa1024, reason: 'r' }, /an RSA key of 1024 bits is too weak; at least 2048/],
      [{ publicKey: ed25519, reason: 'r', ttl: '2h' }, /at most 1h/],
      [{ publicKey: ed25519, reason: 'r', ttl: '30s' }, /at least 1m/],
      [{ publicKey: ed25519, reason: 'r', ttl: 'soon' }, /duration/],
      [{ publicKey: ed25519 }, /reason/],
      [{ publicKey: ed25519, reason: '' }, /reason/],
      [{ reason: 'r' }, /publicKey/],
    ];
    for (const [body, message] of refusals) {
      const reply = await issue(nodeId, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(JSON.stringify(reply.body.error), JSON.stringify(body)).toMatch(message);
    }
    const unknown = await issue(newId('node'), { publicKey: ed25519, reason: 'r' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect(await eventsOf(h, nodeId, 'security.node.ssh-certificate-issued')).toEqual([]);
  });

  it('refuses a node whose agent cannot fetch revocations: pending, blocked (409 INVALID_STATE)', async () => {
    const pending = await seedNode(h, { poolId: 'pool-ssh', provisionState: 'pending' });
    const refused = await issue(pending, { publicKey: ed25519, reason: 'r' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_STATE', details: { state: 'pending' } });
    const { nodeId } = await joined();
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/block`, { body: { reason: 'review' } })).status).toBe(
      200,
    );
    const blocked = await issue(nodeId, { publicKey: ed25519, reason: 'r' });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.details).toMatchObject({ state: 'blocked' });
  });
});

describe('revocation and the agent', () => {
  it('revoke records who and why once; GET /v1/agent/ssh lists the revoked serials of its own node', async () => {
    const { nodeId, credential } = await joined();
    const other = await joined();
    const a = (await issue(nodeId, { publicKey: ed25519, reason: 'a' })).body.serial as number;
    const b = (await issue(nodeId, { publicKey: ed25519, reason: 'b' })).body.serial as number;
    const elsewhere = (await issue(other.nodeId, { publicKey: ed25519, reason: 'c' })).body.serial as number;

    const trust = await call(h, 'GET', '/v1/agent/ssh', { token: credential });
    expect(trust.body).toEqual({
      caPublicKey: h.deps.sshCa.publicKey,
      principal: `drydock-node:${nodeId}`,
      revokedSerials: [],
    });

    const revoke = (node: string, serial: number, reason = 'lost laptop') =>
      call(h, 'POST', `/v1/nodes/${node}/ssh-certificates/${serial}/revoke`, { body: { reason } });
    const first = await revoke(nodeId, a);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      serial: a,
      revokedBy: 'key:bootstrap-operator',
      revokedReason: 'lost laptop',
    });
    const again = await revoke(nodeId, a, 'twice');
    expect(again.body).toEqual(first.body);
    expect(await revoke(other.nodeId, elsewhere)).toMatchObject({ status: 200 });
    // A serial of another node, through this node's path, is no certificate of it.
    expect((await revoke(nodeId, elsewhere)).status).toBe(404);
    expect((await revoke(nodeId, 999_999_999)).status).toBe(404);

    const events = await eventsOf(h, nodeId, 'security.node.ssh-certificate-revoked');
    expect(events).toEqual([
      expect.objectContaining({
        actor: 'key:bootstrap-operator',
        reason: 'lost laptop',
        data: expect.objectContaining({ serial: a }),
      }),
    ]);
    expect((await call(h, 'GET', '/v1/agent/ssh', { token: credential })).body.revokedSerials).toEqual([a]);
    expect(b).toBeGreaterThan(a);
  });
});
