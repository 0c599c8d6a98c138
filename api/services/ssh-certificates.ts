import { and, eq } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { actorOf, type Principal } from '../../domain/principal';
import { provisionRules } from '../../domain/provision';
import { SSH_CLOCK_SKEW_MS, sshKeyIdOf, sshPrincipalOf } from '../../domain/ssh-certificates';
import { appendEvent } from '../../db/events';
import { lockNode } from '../../db/nodes';
import type { SshCertificateRow } from '../../db/queries/ssh-certificates';
import { sshCertificates } from '../../db/schema';
import type { AppDeps } from '../env';
import { fingerprintOf, parseUserPublicKey, signUserCertificate } from '../ssh-ca';

/** What a caller asks for (`POST /v1/nodes/{id}/ssh-certificates`). */
export interface SshCertificateRequest {
  principal: Principal;
  nodeId: string;
  /** One OpenSSH public key line. */
  publicKey: string;
  reason: string;
  ttlMs: number;
}

/**
 * Issues a break-glass SSH certificate for one node (docs/security.md#break-glass-ssh), in one
 * transaction with the node locked: the record (its serial from a sequence, so every serial is
 * the cluster's one), `security.node.ssh-certificate-issued`, and the certificate signed by the
 * SSH CA. Only a node whose agent may fetch its revocations gets one: not pending, rejected,
 * decommissioned, blocked or deleted. `now` is the issuing time (tests: one in the past).
 */
export async function issueSshCertificate(
  deps: Pick<AppDeps, 'db' | 'sshCa'>,
  request: SshCertificateRequest,
  now = new Date(),
): Promise<{ row: SshCertificateRow; certificate: string }> {
  const key = parseUserPublicKey(request.publicKey);
  const actor = actorOf(request.principal);
  return deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, request.nodeId, request.principal);
    if (node.deletedAt || provisionRules(node.provisionState).agent !== 'full' || node.access === 'blocked') {
      const state = node.deletedAt ? 'deleted' : node.access === 'blocked' ? 'blocked' : node.provisionState;
      throw new DrydockError(
        'INVALID_STATE',
        `node ${node.id} is ${state}: its agent cannot fetch SSH revocations, so no certificate is issued for it`,
        { nodeId: node.id, state },
      );
    }
    const [row] = await tx
      .insert(sshCertificates)
      .values({
        nodeId: node.id,
        principal: sshPrincipalOf(node.id),
        keyId: sshKeyIdOf({ actor, nodeId: node.id, reason: request.reason }),
        publicKeyFingerprint: fingerprintOf(key),
        issuedBy: actor,
        reason: request.reason,
        issuedAt: now,
        validAfter: new Date(now.getTime() - SSH_CLOCK_SKEW_MS),
        validBefore: new Date(now.getTime() + request.ttlMs),
      })
      .returning();
    const issued = row!;
    await appendEvent(tx, {
      type: 'security.node.ssh-certificate-issued',
      data: { ...eventDataOf(issued), publicKeyFingerprint: issued.publicKeyFingerprint },
      nodeId: node.id,
      tenantId: node.tenantId,
      actor,
      reason: request.reason,
    });
    const certificate = signUserCertificate(deps.sshCa, {
      key,
      principal: issued.principal,
      keyId: issued.keyId,
      serial: issued.serial,
      validAfter: issued.validAfter,
      validBefore: issued.validBefore,
    });
    return { row: issued, certificate };
  });
}

/**
 * Revokes one of the node's certificates: recorded with `security.node.ssh-certificate-revoked`,
 * and listed in the node's KRL (`GET /v1/agent/ssh`) until it would have expired. One revoked
 * before is answered as it is.
 */
export async function revokeSshCertificate(
  deps: Pick<AppDeps, 'db'>,
  request: { principal: Principal; nodeId: string; serial: number; reason: string },
): Promise<SshCertificateRow> {
  const actor = actorOf(request.principal);
  return deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, request.nodeId, request.principal);
    const [row] = await tx
      .select()
      .from(sshCertificates)
      .where(and(eq(sshCertificates.nodeId, node.id), eq(sshCertificates.serial, request.serial)));
    if (!row) {
      throw new DrydockError('NOT_FOUND', `SSH certificate ${request.serial} of node ${node.id} not found`, {
        nodeId: node.id,
        serial: request.serial,
      });
    }
    if (row.revokedAt) return row;
    const [revoked] = await tx
      .update(sshCertificates)
      .set({ revokedAt: new Date(), revokedBy: actor, revokedReason: request.reason })
      .where(eq(sshCertificates.serial, row.serial))
      .returning();
    await appendEvent(tx, {
      type: 'security.node.ssh-certificate-revoked',
      data: eventDataOf(revoked!),
      nodeId: node.id,
      tenantId: node.tenantId,
      actor,
      reason: request.reason,
    });
    return revoked!;
  });
}

function eventDataOf(row: SshCertificateRow) {
  return {
    serial: row.serial,
    principal: row.principal,
    keyId: row.keyId,
    validAfter: row.validAfter.toISOString(),
    validBefore: row.validBefore.toISOString(),
  };
}
