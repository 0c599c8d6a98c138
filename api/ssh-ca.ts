import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import sshpk from 'sshpk';
import { DrydockError } from '../domain/errors';
import { MIN_RSA_BITS, SSH_CERTIFICATE_EXTENSIONS, SSH_USER_KEY_TYPES } from '../domain/ssh-certificates';
import { readPrivateKeyFile } from '../private-key-file';

/** The cluster's SSH CA: an Ed25519 key that signs break-glass user certificates. */
export interface SshCa {
  privateKey: sshpk.PrivateKey;
  /** The public key as one OpenSSH line (`ssh-ed25519 AAAA… drydock-ssh-ca`), for sshd's TrustedUserCAKeys. */
  publicKey: string;
  /** `SHA256:…`, as `ssh-keygen -l` shows it. */
  fingerprint: string;
}

/** The SSH CA of a PEM or OpenSSH private key; refuses any key but Ed25519. */
export function sshCaOf(text: string, file = '(generated)'): SshCa {
  const privateKey = sshpk.parsePrivateKey(text, 'auto', { filename: file });
  if (privateKey.type !== 'ed25519') {
    throw new Error(`the SSH CA key ${file} is ${privateKey.type}: it must be Ed25519`);
  }
  const publicKey = privateKey.toPublic();
  publicKey.comment = 'drydock-ssh-ca';
  return {
    privateKey,
    publicKey: publicKey.toString('ssh'),
    fingerprint: publicKey.fingerprint('sha256').toString(),
  };
}

function newSshCaPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** A fresh SSH CA held in memory only: for an app built without one (tests, benchmarks). */
export function generateSshCa(): SshCa {
  return sshCaOf(newSshCaPem());
}

/** Where the SSH CA key is when DRYDOCK_SSH_CA_KEY_FILE is unset: in DRYDOCK_HOME. */
export const defaultSshCaKeyFile = (home: string): string => resolve(home, 'ssh-ca-key.pem');

/**
 * DRYDOCK_SSH_CA_KEY_FILE when set (it must exist); in development, `<home>/ssh-ca-key.pem`, made
 * on the first start with mode 0600. A key file its group or others may read is refused.
 */
export function loadSshCa(options: { file?: string; home: string }): SshCa {
  const file = options.file ?? defaultSshCaKeyFile(options.home);
  if (!options.file && !existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, newSshCaPem(), { mode: 0o600 });
  }
  return sshCaOf(readPrivateKeyFile(file, 'DRYDOCK_SSH_CA_KEY_FILE'), file);
}

/** A user's public key as a request gives it: one OpenSSH line of a key type taken. */
export function parseUserPublicKey(line: string): sshpk.Key {
  const refuse = (why: string) =>
    new DrydockError('INVALID_INPUT', `publicKey: ${why}`, { field: 'publicKey' });
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(line.trim(), 'ssh');
  } catch {
    throw refuse('is not an OpenSSH public key line (ssh-ed25519 AAAA…, as in ~/.ssh/id_ed25519.pub)');
  }
  if (!(SSH_USER_KEY_TYPES as readonly string[]).includes(key.type)) {
    throw refuse(`${key.type} keys are not taken; use ${SSH_USER_KEY_TYPES.join(' or ')}`);
  }
  if (key.type === 'rsa' && key.size < MIN_RSA_BITS) {
    throw refuse(`an RSA key of ${key.size} bits is too weak; at least ${MIN_RSA_BITS}`);
  }
  return key;
}

/** What one certificate says. */
export interface UserCertificate {
  key: sshpk.Key;
  principal: string;
  keyId: string;
  serial: number;
  validAfter: Date;
  validBefore: Date;
}

/** The OpenSSH user certificate (one `…-cert-v01@openssh.com` line) for `cert`, signed by `ca`. */
export function signUserCertificate(ca: SshCa, cert: UserCertificate): string {
  const serial = Buffer.alloc(8);
  serial.writeBigUInt64BE(BigInt(cert.serial));
  const signed = sshpk.createCertificate(
    sshpk.identityForUser(cert.principal),
    cert.key,
    sshpk.identityForUser('drydock-ssh-ca'),
    ca.privateKey,
    { validFrom: cert.validAfter, validUntil: cert.validBefore, serial },
  );
  // sshpk names the key id after the subject and writes no extensions: say ours, and sign again.
  signed.signatures.openssh = {
    ...signed.signatures.openssh!,
    keyId: cert.keyId,
    exts: SSH_CERTIFICATE_EXTENSIONS.map((name) => ({ critical: false, name, data: Buffer.alloc(0) })),
  };
  signed.signWith(ca.privateKey);
  return signed.toString('openssh');
}

/** `SHA256:…` of a user's key, as `ssh-keygen -l` shows it. */
export const fingerprintOf = (key: sshpk.Key): string => key.fingerprint('sha256').toString();
