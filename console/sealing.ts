import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** A 256-bit key derived from `secret` for one use, named by `label` (HKDF-SHA-256). */
export function derivedKey(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', label, 32));
}

/** `text` sealed with AES-256-GCM under `key` (and `aad`, when given): iv, tag and ciphertext, base64url. */
export function seal(key: Buffer, text: string, aad?: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad) cipher.setAAD(aad);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** What `seal` sealed under `key` and `aad`; undefined when it was sealed otherwise or altered. */
export function unseal(key: Buffer, sealed: string, aad?: Buffer): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
