import { createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caOffer, generateCa } from '../ca';
import {
  caFingerprint,
  encodePurgePayload,
  endorseCaKey,
  followCaOffer,
  sameKey,
  signPayload,
  verifyPurgeCommand,
  type CaEndorsement,
} from './signing';

const cluster = 'cluster-a';
const [k1, k2, k3, evil] = [generateCa(), generateCa(), generateCa(), generateCa()];
const endorse = (by: typeof k1, of: typeof k1, clusterId = cluster) =>
  endorseCaKey(by.privateKey, { clusterId, publicKey: of.publicKeyPem });
/** The chain an API with k3 current and k2, k1 previous hands out: newest first. */
const chain = [endorse(k2, k3), endorse(k1, k2)];

describe('following a CA rotation', () => {
  it('the same key (even as other PEM text) changes nothing', () => {
    const rewrapped = createPublicKey(k1.publicKeyPem)
      .export({ type: 'spki', format: 'pem' })
      .toString()
      .trim();
    expect(rewrapped).not.toBe(k1.publicKeyPem);
    expect(sameKey(rewrapped, k1.publicKeyPem)).toBe(true);
    expect(followCaOffer(k1.publicKeyPem, { publicKey: rewrapped, endorsements: [] }, cluster)).toEqual({
      ok: true,
      changed: false,
    });
  });

  it('one rotation, and two missed ones, are followed through the chain in any order', () => {
    const offer = { publicKey: k3.publicKeyPem, endorsements: chain };
    for (const trusted of [k1, k2]) {
      expect(followCaOffer(trusted.publicKeyPem, offer, cluster)).toEqual({
        ok: true,
        changed: true,
        publicKey: k3.publicKeyPem,
      });
    }
    const shuffled = { publicKey: k3.publicKeyPem, endorsements: [...chain].reverse() };
    expect(followCaOffer(k1.publicKeyPem, shuffled, cluster)).toMatchObject({ ok: true, changed: true });
  });

  it('refuses a key nobody the node trusts endorsed', () => {
    const refused = { ok: false, reason: 'the offered CA key is not endorsed by the key this node trusts' };
    const offers: [string, { publicKey: string; endorsements: CaEndorsement[] }][] = [
      ['no endorsement', { publicKey: evil.publicKeyPem, endorsements: [] }],
      ['self-endorsed', { publicKey: evil.publicKeyPem, endorsements: [endorse(evil, evil)] }],
      ['endorsed by a stranger', { publicKey: evil.publicKeyPem, endorsements: [endorse(k3, evil)] }],
      ['another cluster', { publicKey: k2.publicKeyPem, endorsements: [endorse(k1, k2, 'cluster-b')] }],
      ['a broken link', { publicKey: k3.publicKeyPem, endorsements: [chain[0]!] }],
      [
        'a real endorsement of another key',
        { publicKey: evil.publicKeyPem, endorsements: [endorse(k1, k2), endorse(k2, k3)] },
      ],
      [
        'a signature over other claims',
        {
          publicKey: k2.publicKeyPem,
          endorsements: [{ ...endorse(k1, k2), payload: endorse(k1, evil).payload }],
        },
      ],
    ];
    for (const [what, offer] of offers)
      expect(followCaOffer(k1.publicKeyPem, offer, cluster), what).toEqual(refused);
  });

  it('a purge signature never passes for an endorsement, nor an endorsement for a purge', () => {
    // The bytes k1 signs for a purge, offered as an endorsement: its kind is not a CA key.
    const payload = encodePurgePayload({
      clusterId: cluster,
      nodeId: 'node_01k5w8v3x9q2m4n6p8r0s2t4v6',
      commandId: 'cmd_01k5w8v3x9q2m4n6p8r0s2t4v6',
      kind: 'purge',
      issuedAt: new Date().toISOString(),
    });
    const purge = { payload, signature: signPayload(k1.privateKey, payload) };
    expect(
      followCaOffer(k1.publicKeyPem, { publicKey: k2.publicKeyPem, endorsements: [purge] }, cluster).ok,
    ).toBe(false);
    const endorsement = endorse(k1, k2);
    const asPurge = verifyPurgeCommand(
      { id: 'cmd_01k5w8v3x9q2m4n6p8r0s2t4v6', ...endorsement },
      { caPublicKeyPem: k1.publicKeyPem, clusterId: cluster, nodeId: 'node_01k5w8v3x9q2m4n6p8r0s2t4v6' },
    );
    expect(asPurge).toEqual({ ok: false, reason: 'payload kind ca-key is not purge' });
  });

  it('fingerprints a key by its SubjectPublicKeyInfo bytes', () => {
    expect(caFingerprint(k1.publicKeyPem)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(caFingerprint(k1.publicKeyPem)).not.toBe(caFingerprint(k2.publicKeyPem));
  });
});

describe('the offer an API makes from DRYDOCK_CA_PREVIOUS_KEY_FILES', () => {
  it('chains the previous keys newest first, and refuses a key listed twice or equal to the current one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-ca-'));
    try {
      const file = (name: string, ca: typeof k1) => {
        const path = join(dir, name);
        writeFileSync(path, ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), {
          mode: 0o600,
        });
        return path;
      };
      const [f1, f2] = [file('ca-1.pem', k1), file('ca-2.pem', k2)];
      const offer = caOffer(k3, [f2, f1], cluster);
      expect(offer).toEqual({ publicKey: k3.publicKeyPem, endorsements: chain });
      expect(caOffer(k3, [], cluster)).toEqual({ publicKey: k3.publicKeyPem, endorsements: [] });
      expect(() => caOffer(k3, [f2, f2], cluster)).toThrow(`${f2} is the same key as ${f2}`);
      expect(() => caOffer(k2, [f2], cluster)).toThrow(`${f2} is the same key as the current CA key`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
