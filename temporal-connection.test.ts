import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { issueCertificate, type Issued } from './scripts/services/pki';
import { temporalConnection } from './temporal-connection';

const dir = mkdtempSync(join(tmpdir(), 'drydock-temporal-connection-'));
let ca: Issued;
let client: Issued;
let other: Issued;
beforeAll(async () => {
  ca = await issueCertificate(dir, 'ca', '/CN=test-ca');
  client = await issueCertificate(dir, 'client', '/CN=drydock', {
    ca,
    extensions: ['extendedKeyUsage=clientAuth'],
  });
  other = await issueCertificate(dir, 'other', '/CN=other', { ca, extensions: [] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const connectionOf = (env: Record<string, string>) => temporalConnection(loadConfig(env));
const refusal = (env: Record<string, string>) => {
  try {
    connectionOf(env);
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};
const address = 'temporal.example:7233';

describe('the Temporal connection from the configuration', () => {
  it('is plain without TLS settings, and none without an address (npm start runs its dev server)', () => {
    expect(connectionOf({ TEMPORAL_ADDRESS: address })?.options).toEqual({ address });
    expect(connectionOf({})).toBeNull();
  });

  it('is mTLS with a CA, a certificate and its key, and its summary holds fingerprints, never a key', () => {
    const connection = connectionOf({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TLS_CA: ca.certFile,
      TEMPORAL_TLS_CERT: client.certFile,
      TEMPORAL_TLS_KEY: client.keyFile,
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
    })!;
    expect(connection.options).toEqual({
      address,
      tls: {
        serverNameOverride: 'localhost',
        serverRootCACertificate: readFileSync(ca.certFile),
        clientCertPair: { crt: readFileSync(client.certFile), key: readFileSync(client.keyFile) },
      },
    });
    expect(connection.summary).toMatchObject({
      address,
      tls: true,
      serverName: 'localhost',
      ca: { subject: 'CN=test-ca', fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
      clientCertificate: { subject: 'CN=drydock' },
      clientKey: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(connection.summary)).not.toContain('PRIVATE KEY');
  });

  it('sends an API key from its file, which turns TLS on (system CAs); the log shows its hash only', () => {
    const file = join(dir, 'api-key');
    writeFileSync(file, 'tcld_secret\n', { mode: 0o600 });
    const connection = connectionOf({ TEMPORAL_ADDRESS: address, TEMPORAL_API_KEY_FILE: file })!;
    expect(connection.options).toEqual({ address, tls: {}, apiKey: 'tcld_secret' });
    expect(JSON.stringify(connection.summary)).not.toContain('tcld_secret');
    expect(connection.summary.apiKey).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('refuses at start what cannot work: half a pair, a key of another certificate, TLS without an address, open files', () => {
    expect(refusal({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CERT: client.certFile })).toBe(
      'invalid configuration: TEMPORAL_TLS_CERT is set without TEMPORAL_TLS_KEY',
    );
    expect(refusal({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_KEY: client.keyFile })).toBe(
      'invalid configuration: TEMPORAL_TLS_KEY is set without TEMPORAL_TLS_CERT',
    );
    expect(
      refusal({
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TLS_CERT: client.certFile,
        TEMPORAL_TLS_KEY: other.keyFile,
      }),
    ).toBe(
      `invalid configuration: TEMPORAL_TLS_KEY ${other.keyFile} is not the key of TEMPORAL_TLS_CERT ${client.certFile}`,
    );
    expect(refusal({ TEMPORAL_TLS_CA: ca.certFile })).toMatch(/TEMPORAL_ADDRESS names, and it is unset/);
    expect(refusal({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CA: client.keyFile })).toBe(
      'invalid configuration: TEMPORAL_TLS_CA holds no PEM certificate',
    );
    expect(refusal({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CA: join(dir, 'nowhere.crt') })).toMatch(
      /^invalid configuration: TEMPORAL_TLS_CA: ENOENT/,
    );
    const open = join(dir, 'open.key');
    writeFileSync(open, readFileSync(client.keyFile));
    chmodSync(open, 0o644);
    expect(
      refusal({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CERT: client.certFile, TEMPORAL_TLS_KEY: open }),
    ).toMatch(/^TEMPORAL_TLS_KEY: UNPROTECTED PRIVATE KEY FILE .*permissions 0644 are too open/);
    const apiKey = join(dir, 'open-api-key');
    writeFileSync(apiKey, 'tcld_secret');
    chmodSync(apiKey, 0o640);
    expect(refusal({ TEMPORAL_ADDRESS: address, TEMPORAL_API_KEY_FILE: apiKey })).toMatch(
      /^TEMPORAL_API_KEY_FILE: UNPROTECTED PRIVATE KEY FILE/,
    );
  });
});
