import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { hashSecret, newSecret } from '../../domain/secrets';
import type { Db } from '../../db/client';
import { findKey, type ApiKeyRow } from '../../db/queries/keys';
import { apiKeys } from '../../db/schema';

function keyNotFound(id: string): DrydockError {
  return new DrydockError('NOT_FOUND', `key ${id} not found`, { keyId: id });
}

/** A new API key and its secret (returned once; only its hash is kept). */
export async function createKey(
  db: Db,
  values: Pick<ApiKeyRow, 'name' | 'tenantId' | 'actions'>,
): Promise<{ key: ApiKeyRow; secret: string }> {
  const secret = newSecret('ddk');
  const [key] = await db
    .insert(apiKeys)
    .values({ id: newId('key'), ...values, secretHash: hashSecret(secret) })
    .returning();
  return { key: key!, secret };
}

/** Revokes a key from now on; a key still in a rotation grace has its grace ended now. */
export async function revokeKey(db: Db, id: string): Promise<ApiKeyRow> {
  const [revoked] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.revokedAt), gt(apiKeys.revokedAt, sql`now()`))))
    .returning();
  const key = revoked ?? (await findKey(db, id));
  if (!key) throw keyNotFound(id);
  return key;
}

/**
 * Rotates a live key: a new key with its tenant and actions and a new secret; the old one stays
 * accepted for `graceSeconds`. A key already rotated or revoked is INVALID_STATE.
 */
export async function rotateKey(db: Db, id: string, graceSeconds: number) {
  const secret = newSecret('ddk');
  return db.transaction(async (tx) => {
    // The row lock makes concurrent rotations of one key take turns: only the first finds it live.
    const [old] = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`now() + make_interval(secs => ${graceSeconds})` })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    if (!old) {
      const existing = await findKey(tx, id);
      if (!existing) throw keyNotFound(id);
      throw new DrydockError(
        'INVALID_STATE',
        `key ${id} was already rotated or revoked (revokedAt ${existing.revokedAt!.toISOString()}); rotate its successor`,
        { keyId: id, revokedAt: existing.revokedAt!.toISOString() },
      );
    }
    const [created] = await tx
      .insert(apiKeys)
      .values({
        id: newId('key'),
        name: old.name,
        tenantId: old.tenantId,
        actions: old.actions,
        secretHash: hashSecret(secret),
      })
      .returning();
    return { previous: old, key: created!, secret };
  });
}
