import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** A certificate and its private key, as files. */
export interface Issued {
  keyFile: string;
  certFile: string;
}

/** A new private key at `<dir>/<name>.key` (PKCS#8 PEM, mode 0600). */
export function writeKey(dir: string, name: string, type: 'ec' | 'rsa' = 'ec'): string {
  const file = join(dir, `${name}.key`);
  const { privateKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return file;
}

/**
 * A certificate for a new key of its own, valid ten years, at `<dir>/<name>.crt` and `.key` (both
 * mode 0600): a self-signed CA without `signer`, else a leaf the signer's CA signs, with its
 * extensions (`subjectAltName=…`, `extendedKeyUsage=…`). Keys from node:crypto, certificates from
 * the openssl CLI (Node cannot issue them): throwaway PKIs for the services tests and the
 * production shape start.
 */
export async function issueCertificate(
  dir: string,
  name: string,
  subject: string,
  signer?: { ca: Issued; extensions: string[] },
): Promise<Issued> {
  const keyFile = writeKey(dir, name);
  const certFile = join(dir, `${name}.crt`);
  const leaf = signer
    ? [
        ...['-CA', signer.ca.certFile, '-CAkey', signer.ca.keyFile],
        ...[
          'basicConstraints=critical,CA:FALSE',
          'keyUsage=critical,digitalSignature',
          ...signer.extensions,
        ].flatMap((extension) => ['-addext', extension]),
      ]
    : [];
  await exec('openssl', [
    ...['req', '-x509', '-new', '-days', '3650', '-key', keyFile, '-out', certFile, '-subj', subject],
    ...leaf,
  ]);
  chmodSync(certFile, 0o600);
  return { keyFile, certFile };
}
