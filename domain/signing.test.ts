import { describe, expect, it } from 'vitest';
import { generateCa } from '../ca';
import { encodePurgePayload, signPayload, verifyPurgeCommand, type PurgeClaims } from './signing';

const ca = generateCa();
const claims: PurgeClaims = {
  clusterId: 'prod-eu',
  nodeId: 'node_01k5w8v3x9q2m4n6p8r0s2t4v6',
  commandId: 'cmd_01k5w8v3x9q2m4n6p8r0s2t4v7',
  kind: 'purge',
  issuedAt: '2026-11-30T12:00:00.000Z',
};
const expected = { caPublicKeyPem: ca.publicKeyPem, clusterId: 'prod-eu', nodeId: claims.nodeId };

function signed(c: PurgeClaims, key = ca) {
  const payload = encodePurgePayload(c);
  return { id: c.commandId, payload, signature: signPayload(key.privateKey, payload) };
}

describe('purge command signatures', () => {
  it('encodes the claims as UTF-8 JSON with the keys in spec order', () => {
    const json = Buffer.from(encodePurgePayload(claims), 'base64').toString('utf8');
    expect(json).toBe(
      '{"clusterId":"prod-eu","nodeId":"node_01k5w8v3x9q2m4n6p8r0s2t4v6","commandId":"cmd_01k5w8v3x9q2m4n6p8r0s2t4v7","kind":"purge","issuedAt":"2026-11-30T12:00:00.000Z"}',
    );
  });

  it('verifies a command signed by the cluster CA for this node', () => {
    expect(verifyPurgeCommand(signed(claims), expected)).toEqual({ ok: true, claims });
  });

  it('refuses a forged signature, another cluster, another node, a moved command, a tampered payload', () => {
    const forged = signed(claims, generateCa());
    expect(verifyPurgeCommand(forged, expected)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/signature/),
    });
    expect(verifyPurgeCommand(signed({ ...claims, clusterId: 'other' }), expected)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/cluster other/),
    });
    expect(
      verifyPurgeCommand(signed({ ...claims, nodeId: 'node_01k5w8v3x9q2m4n6p8r0s2t4v8' }), expected),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/for node/),
    });
    const replayed = { ...signed(claims), id: 'cmd_01k5w8v3x9q2m4n6p8r0s2t4v9' };
    expect(verifyPurgeCommand(replayed, expected)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/delivered as/),
    });
    const good = signed(claims);
    const tampered = {
      ...good,
      payload: encodePurgePayload({ ...claims, issuedAt: '2027-01-01T00:00:00.000Z' }),
    };
    expect(verifyPurgeCommand(tampered, expected).ok).toBe(false);
    expect(verifyPurgeCommand({ id: claims.commandId, payload: null, signature: null }, expected).ok).toBe(
      false,
    );
    expect(verifyPurgeCommand({ ...good, signature: 'not-base64!!' }, expected).ok).toBe(false);
  });
});
