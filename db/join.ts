import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { credentialTtlMs } from '../domain/credentials';
import { DrydockError } from '../domain/errors';
import { newId } from '../domain/ids';
import type { Inventory } from '../domain/inventory';
import { hashSecret } from '../domain/secrets';
import type { Db, Tx } from './client';
import { appendEvent } from './events';
import { issueIdentity } from './identity';
import { runAcceptance } from './acceptance';
import { recordInventory } from './inventory';
import { joinTokens, nodeLabels, nodes, pools } from './schema';

export interface JoinRequest {
  token?: string;
  publicKey: string;
  hostname: string;
  displayName?: string;
  poolId?: string;
  inventory: Inventory;
}

export interface JoinResult {
  nodeId: string;
  credential: string;
  credentialExpiresAt: string;
  provisionState: 'pending' | 'adopted' | 'adopting';
}

/** Spends one use of a token, atomically: of racing joins on its last use exactly one gets it. */
async function spendToken(tx: Tx, secret: string) {
  const [token] = await tx
    .update(joinTokens)
    .set({ uses: sql`${joinTokens.uses} + 1` })
    .where(
      and(
        eq(joinTokens.secretHash, hashSecret(secret)),
        isNull(joinTokens.revokedAt),
        or(isNull(joinTokens.expiresAt), gt(joinTokens.expiresAt, sql`now()`)),
        or(eq(joinTokens.maxUses, 0), sql`${joinTokens.uses} < ${joinTokens.maxUses}`),
      ),
    )
    .returning();
  if (!token)
    throw new DrydockError('UNAUTHENTICATED', 'the join token is unknown, expired, revoked or used up');
  return token;
}

/**
 * A machine joins: with a token, a new node in the token's pool goes `adopting` and, once
 * acceptance passes, `adopted`; without one it waits `pending` for an operator. Either way it gets
 * a certificate for its public key and a node credential, all in one transaction.
 */
export async function joinNode(db: Db, request: JoinRequest): Promise<JoinResult> {
  return db.transaction(async (tx): Promise<JoinResult> => {
    const token = request.token ? await spendToken(tx, request.token) : null;
    const [pool] = token ? await tx.select().from(pools).where(eq(pools.id, token.poolId)) : [];
    if (token && !pool)
      throw new DrydockError('INVALID_STATE', `the token's pool ${token.poolId} no longer exists`);
    const id = newId('node');
    const [node] = await tx
      .insert(nodes)
      .values({
        id,
        hostname: request.hostname,
        displayName: request.displayName ?? null,
        provisionState: pool ? 'adopting' : 'pending',
        poolId: pool?.id ?? null,
        tenantId: pool?.tenantId ?? null,
        siteId: pool?.siteId ?? null,
        requestedPoolId: pool ? null : (request.poolId ?? null),
        connectivity: 'disconnected',
        liveness: 'alive',
      })
      .returning();
    await recordInventory(tx, node!, request.inventory, { event: false });
    if (token) {
      const labels = Object.entries(token.labels).map(([key, value]) => ({
        nodeId: id,
        key,
        value,
        source: 'operator' as const,
      }));
      if (labels.length > 0) await tx.insert(nodeLabels).values(labels).onConflictDoNothing();
    }
    if (pool) {
      await appendEvent(tx, {
        nodeId: id,
        tenantId: node!.tenantId,
        type: 'node.adopting',
        actor: `node:${id}`,
        data: { joinToken: token!.id, hostname: request.hostname },
      });
    }
    const identity = await issueIdentity(tx, node!, request.publicKey, credentialTtlMs(pool?.policy));
    // Acceptance in the same transaction: a join is adopted, or waits, or never happened.
    const accepted = await runAcceptance(tx, id);
    return {
      nodeId: id,
      credential: identity.credential,
      credentialExpiresAt: identity.expiresAt.toISOString(),
      provisionState: accepted.provisionState as JoinResult['provisionState'],
    };
  });
}
