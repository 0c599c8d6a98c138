import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caOffer, generateCa, loadCa } from './ca';
import { certificateSummary, privateKeyFingerprint, readPrivateKeyFile } from './private-key-file';
import { issueCertificate, writeKey } from './scripts/services/pki';

const dir = mkdtempSync(join(tmpdir(), 'drydock-key-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a private key file', () => {
  it('is read when only its owner may read it', () => {
    const file = writeKey(dir, 'owner-only');
    expect(readPrivateKeyFile(file, 'TEMPORAL_TLS_KEY')).toContain('BEGIN PRIVATE KEY');
    chmodSync(file, 0o400);
    expect(readPrivateKeyFile(file, 'TEMPORAL_TLS_KEY')).toContain('BEGIN PRIVATE KEY');
  });

  it.each([0o644, 0o640, 0o604, 0o660, 0o602])(
    'is refused, as ssh refuses it, with mode %o, and its contents are not in the message',
    (mode) => {
      const file = writeKey(dir, `mode-${mode.toString(8)}`);
      chmodSync(file, mode);
      const refused = (() => {
        try {
          readPrivateKeyFile(file, 'TEMPORAL_TLS_KEY');
        } catch (error) {
          return (error as Error).message;
        }
        return 'read';
      })();
      expect(refused).toBe(
        `TEMPORAL_TLS_KEY: UNPROTECTED PRIVATE KEY FILE ${file}: permissions 0${mode.toString(8)} are too open, ` +
          `a private key must not be accessible by group or others (chmod 600 ${file})`,
      );
      expect(refused).not.toContain(readFileSync(file, 'utf8').split('\n')[1]);
    },
  );

  it('is how the cluster CA key and the keys it replaced are read: an open one stops the start', () => {
    const file = join(dir, 'ca-key.pem');
    writeFileSync(file, generateCa().privateKey.export({ type: 'pkcs8', format: 'pem' }));
    chmodSync(file, 0o644);
    expect(() => loadCa({ file, home: dir })).toThrow(/^DRYDOCK_CA_KEY_FILE: UNPROTECTED PRIVATE KEY FILE/);
    expect(() => caOffer(generateCa(), [file], 'drydock-test')).toThrow(
      /^DRYDOCK_CA_PREVIOUS_KEY_FILES: UNPROTECTED PRIVATE KEY FILE/,
    );
    chmodSync(file, 0o600);
    expect(loadCa({ file, home: dir }).privateKey.asymmetricKeyType).toBe('ed25519');
  });

  it('that is missing is refused naming its setting', () => {
    expect(() => readPrivateKeyFile(join(dir, 'nowhere.key'), 'DRYDOCK_CA_KEY_FILE')).toThrow(
      /^DRYDOCK_CA_KEY_FILE: ENOENT/,
    );
  });

  it("has the fingerprint openssl gives its public half, and a certificate openssl's fingerprint, subject and expiry", async () => {
    const issued = await issueCertificate(dir, 'fingerprinted', '/CN=drydock-test');
    const der = execFileSync('openssl', ['pkey', '-in', issued.keyFile, '-pubout', '-outform', 'DER']);
    const sha256 = execFileSync('sha256sum', { input: der, encoding: 'utf8' }).split(' ')[0];
    expect(privateKeyFingerprint(readFileSync(issued.keyFile, 'utf8'))).toBe(`sha256:${sha256}`);

    const openssl = (...flags: string[]) =>
      execFileSync('openssl', ['x509', '-in', issued.certFile, '-noout', ...flags], {
        encoding: 'utf8',
      }).trim();
    const summary = certificateSummary(readFileSync(issued.certFile));
    expect(summary.fingerprint).toBe(
      `sha256:${openssl('-fingerprint', '-sha256').replace(/^.*=/, '').replaceAll(':', '').toLowerCase()}`,
    );
    expect(summary.subject).toBe('CN=drydock-test');
    expect(new Date(summary.notAfter).getTime()).toBe(
      new Date(openssl('-enddate').replace('notAfter=', '')).getTime(),
    );
  });
});
