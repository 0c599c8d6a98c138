import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** The cluster CA: an Ed25519 key that signs purge commands; agents get its public half at join. */
export interface ClusterCa {
  privateKey: KeyObject;
  /** PEM SubjectPublicKeyInfo. */
  publicKeyPem: string;
}

export function caFromPrivatePem(pem: string): ClusterCa {
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the cluster CA key must be Ed25519');
  const publicKeyPem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  return { privateKey, publicKeyPem };
}

export function generateCa(): ClusterCa {
  const { privateKey } = generateKeyPairSync('ed25519');
  return caFromPrivatePem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
}

/**
 * DRYDOCK_CA_KEY_FILE when set (it must exist); in development, `<home>/ca-key.pem`, made on the
 * first start with mode 0600.
 */
export function loadCa(options: { file?: string; home: string }): ClusterCa {
  if (options.file) return caFromPrivatePem(readFileSync(options.file, 'utf8'));
  const file = resolve(options.home, 'ca-key.pem');
  if (existsSync(file)) return caFromPrivatePem(readFileSync(file, 'utf8'));
  mkdirSync(dirname(file), { recursive: true });
  const ca = generateCa();
  writeFileSync(file, ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 });
  return ca;
}
