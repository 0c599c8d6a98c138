import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** The signed content of a purge command; key order is part of the format (docs/lifecycle/purge.md). */
export interface PurgeClaims {
  clusterId: string;
  nodeId: string;
  commandId: string;
  kind: 'purge';
  issuedAt: string;
}

/** The exact bytes that are signed: UTF-8 JSON with the keys in the spec's order, base64. */
export function encodePurgePayload(claims: PurgeClaims): string {
  const ordered = {
    clusterId: claims.clusterId,
    nodeId: claims.nodeId,
    commandId: claims.commandId,
    kind: claims.kind,
    issuedAt: claims.issuedAt,
  };
  return Buffer.from(JSON.stringify(ordered), 'utf8').toString('base64');
}

/** Ed25519 signature (base64) over the payload's bytes. */
export function signPayload(privateKey: KeyObject, payloadBase64: string): string {
  return sign(null, Buffer.from(payloadBase64, 'base64'), privateKey).toString('base64');
}

export type PurgeVerdict = { ok: true; claims: PurgeClaims } | { ok: false; reason: string };

/**
 * What a node checks before it wipes itself: the signature against the CA key it got at join, and
 * that the command names its own cluster, its own node id, and itself (the command id it came as).
 */
export function verifyPurgeCommand(
  command: { id: string; payload: string | null; signature: string | null },
  expected: { caPublicKeyPem: string; clusterId: string; nodeId: string },
): PurgeVerdict {
  if (!command.payload || !command.signature) return { ok: false, reason: 'unsigned purge command' };
  if (!signedBy(expected.caPublicKeyPem, command.payload, command.signature))
    return { ok: false, reason: 'bad signature: not signed by this cluster CA' };
  let claims: PurgeClaims;
  try {
    claims = JSON.parse(Buffer.from(command.payload, 'base64').toString('utf8')) as PurgeClaims;
  } catch {
    return { ok: false, reason: 'malformed payload' };
  }
  if (claims.kind !== 'purge')
    return { ok: false, reason: `payload kind ${String(claims.kind)} is not purge` };
  if (claims.clusterId !== expected.clusterId) {
    return { ok: false, reason: `command is for cluster ${claims.clusterId}, not ${expected.clusterId}` };
  }
  if (claims.nodeId !== expected.nodeId) {
    return { ok: false, reason: `command is for node ${claims.nodeId}, not ${expected.nodeId}` };
  }
  if (claims.commandId !== command.id) {
    return { ok: false, reason: `payload names command ${claims.commandId}, delivered as ${command.id}` };
  }
  return { ok: true, claims };
}

/** Whether `signature` (base64) is the Ed25519 signature of the payload's bytes by `publicKeyPem`. */
function signedBy(publicKeyPem: string, payloadBase64: string, signature: string): boolean {
  try {
    return verify(
      null,
      Buffer.from(payloadBase64, 'base64'),
      createPublicKey(publicKeyPem),
      Buffer.from(signature, 'base64'),
    );
  } catch {
    return false;
  }
}

/**
 * A CA key rotation, as agents learn it: the key that replaced another, signed by the key it
 * replaced. `kind` keeps an endorsement from ever passing for a purge command and the other way round.
 */
export interface CaKeyClaims {
  clusterId: string;
  kind: 'ca-key';
  /** The new CA public key, PEM SubjectPublicKeyInfo. */
  publicKey: string;
}

export interface CaEndorsement {
  /** base64 of the claims as UTF-8 JSON, keys in this order: clusterId, kind, publicKey. */
  payload: string;
  /** base64 Ed25519 signature over the payload's bytes by the key `publicKey` replaced. */
  signature: string;
}

/** What the API hands agents: the current CA public key, and the chain that leads to it. */
export interface CaOffer {
  publicKey: string;
  /** Newest first: the current key signed by the one before it, that one by its predecessor, … */
  endorsements: CaEndorsement[];
}

/** `previous` vouches for `publicKey`: the endorsement an agent trusting `previous` accepts. */
export function endorseCaKey(previous: KeyObject, claims: Omit<CaKeyClaims, 'kind'>): CaEndorsement {
  const ordered: CaKeyClaims = { clusterId: claims.clusterId, kind: 'ca-key', publicKey: claims.publicKey };
  const payload = Buffer.from(JSON.stringify(ordered), 'utf8').toString('base64');
  return { payload, signature: signPayload(previous, payload) };
}

/** Two PEM public keys are the same key when their SubjectPublicKeyInfo bytes are (not their text). */
export function sameKey(a: string, b: string): boolean {
  if (a === b) return true;
  const der = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' });
  try {
    return der(a).equals(der(b));
  } catch {
    return false;
  }
}

/** `sha256:` and the hex SHA-256 of the key's SubjectPublicKeyInfo bytes (what `openssl pkey -pubout -outform DER | sha256sum` prints). */
export function caFingerprint(publicKeyPem: string): string {
  try {
    const der = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
    return `sha256:${createHash('sha256').update(der).digest('hex')}`;
  } catch {
    return 'an unreadable key';
  }
}

export type CaVerdict =
  | { ok: true; changed: false }
  | { ok: true; changed: true; publicKey: string }
  | { ok: false; reason: string };

/**
 * What an agent trusting `trustedPem` makes of the CA key the API offers: the same key (nothing to
 * do); a new key reached from the trusted one through endorsements, each signed by the key it
 * replaces (trust the new key from now on); or neither — refused, whoever sent it: only a holder of
 * a CA private key the node already trusts can move its trust.
 */
export function followCaOffer(trustedPem: string, offer: CaOffer, clusterId: string): CaVerdict {
  if (sameKey(trustedPem, offer.publicKey)) return { ok: true, changed: false };
  let current = trustedPem;
  // Each step must move to a key the chain has not been at: a chain cannot loop.
  const seen = [trustedPem];
  for (let step = 0; step < offer.endorsements.length; step++) {
    const next = offer.endorsements
      .filter((e) => signedBy(current, e.payload, e.signature))
      .map((e) => endorsedKey(e, clusterId))
      .find((key): key is string => key !== null && !seen.some((k) => sameKey(k, key)));
    if (next === undefined) break;
    if (sameKey(next, offer.publicKey)) return { ok: true, changed: true, publicKey: offer.publicKey };
    seen.push(next);
    current = next;
  }
  return { ok: false, reason: 'the offered CA key is not endorsed by the key this node trusts' };
}

/** The key an endorsement vouches for, when it is a CA-key endorsement of this cluster. */
function endorsedKey(endorsement: CaEndorsement, clusterId: string): string | null {
  let claims: Partial<CaKeyClaims>;
  try {
    claims = JSON.parse(Buffer.from(endorsement.payload, 'base64').toString('utf8')) as Partial<CaKeyClaims>;
  } catch {
    return null;
  }
  if (claims.kind !== 'ca-key' || claims.clusterId !== clusterId || typeof claims.publicKey !== 'string') {
    return null;
  }
  try {
    return createPublicKey(claims.publicKey).asymmetricKeyType === 'ed25519' ? claims.publicKey : null;
  } catch {
    return null;
  }
}
