import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { endorseCaKey, sameKey, type CaOffer } from './domain/signing';
import { readPrivateKeyFile } from './private-key-file';

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

/** Where the CA key is when DRYDOCK_CA_KEY_FILE is unset: in DRYDOCK_HOME. */
export const defaultCaKeyFile = (home: string): string => resolve(home, 'ca-key.pem');

/**
 * DRYDOCK_CA_KEY_FILE when set (it must exist); in development, `<home>/ca-key.pem`, made on the
 * first start with mode 0600. A key file its group or others may read is refused.
 */
export function loadCa(options: { file?: string; home: string }): ClusterCa {
  const file = options.file ?? defaultCaKeyFile(options.home);
  if (options.file || existsSync(file)) {
    return caFromPrivatePem(readPrivateKeyFile(file, 'DRYDOCK_CA_KEY_FILE'));
  }
  mkdirSync(dirname(file), { recursive: true });
  const ca = generateCa();
  writeFileSync(file, ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 });
  return ca;
}

/**
 * What agents are handed to follow a CA rotation: the current public key, endorsed by the key it
 * replaced, that one by its own predecessor, and so on. `previousFiles` are the keys this one
 * replaced, newest first (DRYDOCK_CA_PREVIOUS_KEY_FILES): an agent that joined under any of them
 * reaches the current key. Ed25519 signatures are deterministic, so every API process computes
 * the same chain.
 */
export function caOffer(current: ClusterCa, previousFiles: readonly string[], clusterId: string): CaOffer {
  const chain = [
    current,
    ...previousFiles.map((file) =>
      caFromPrivatePem(readPrivateKeyFile(file, 'DRYDOCK_CA_PREVIOUS_KEY_FILES')),
    ),
  ];
  chain.forEach((ca, index) => {
    const twin = chain.findIndex((other) => sameKey(other.publicKeyPem, ca.publicKeyPem));
    if (twin !== index) {
      throw new Error(
        `DRYDOCK_CA_PREVIOUS_KEY_FILES: ${previousFiles[index - 1]} is the same key as ${twin === 0 ? 'the current CA key' : previousFiles[twin - 1]}`,
      );
    }
  });
  const endorsements = chain
    .slice(1)
    .map((previous, index) =>
      endorseCaKey(previous.privateKey, { clusterId, publicKey: chain[index]!.publicKeyPem }),
    );
  return { publicKey: current.publicKeyPem, endorsements };
}
