import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** The signed content of a purge command; key order is part of the format (spec/purge.md). */
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
  let valid = false;
  try {
    valid = verify(
      null,
      Buffer.from(command.payload, 'base64'),
      createPublicKey(expected.caPublicKeyPem),
      Buffer.from(command.signature, 'base64'),
    );
  } catch {
    valid = false;
  }
  if (!valid) return { ok: false, reason: 'bad signature: not signed by this cluster CA' };
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
