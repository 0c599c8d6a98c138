import { readFileSync, statSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { caFingerprint } from './domain/signing';

/**
 * The text of a private key file (or any secret file), refused — as ssh refuses an unprotected
 * identity file — when its mode lets its group or others read or write it: such a key may already
 * be someone else's. `what` names the setting in the message, e.g. `DRYDOCK_SSH_CA_KEY_FILE`. The
 * message never holds the file's contents.
 */
export function readPrivateKeyFile(file: string, what: string): string {
  let mode: number;
  let text: string;
  try {
    mode = statSync(file).mode & 0o777;
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${what}: ${(error as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new Error(
      `${what}: UNPROTECTED PRIVATE KEY FILE ${file}: permissions ${mode.toString(8).padStart(4, '0')} ` +
        `are too open, a private key must not be accessible by group or others (chmod 600 ${file})`,
    );
  }
  return text;
}

/**
 * `sha256:…` of a private key's public half (its SubjectPublicKeyInfo, DER): what
 * `openssl pkey -in FILE -pubout -outform DER | sha256sum` prints, and what a start-up logs.
 */
export const privateKeyFingerprint = (pem: string): string => caFingerprint(pem);

/** What a start-up logs of a certificate (PEM; the first of a bundle): never a secret. */
export interface CertificateSummary {
  /** `sha256:…` of its DER, as `openssl x509 -noout -fingerprint -sha256` shows it (without colons). */
  fingerprint: string;
  subject: string;
  notAfter: string;
}

export function certificateSummary(pem: string | Buffer): CertificateSummary {
  const certificate = new X509Certificate(pem);
  return {
    fingerprint: `sha256:${certificate.fingerprint256.replaceAll(':', '').toLowerCase()}`,
    subject: certificate.subject.replaceAll('\n', ', '),
    notAfter: new Date(certificate.validTo).toISOString(),
  };
}
