import { and, eq, isNull, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { hashSecret, newSecret } from '../../domain/secrets';
import type { Db } from '../../db/client';
import { findToken, tokenManagedIn, type JoinTokenRow } from '../../db/queries/tokens';
import { joinTokens } from '../../db/schema';

/** A new join token and its secret (returned once; only its hash is kept). */
export async function createToken(
  db: Db,
  values: Omit<typeof joinTokens.$inferInsert, 'id' | 'secretHash'>,
): Promise<{ token: JoinTokenRow; secret: string }> {
  const secret = newSecret('ddj');
  const [token] = await db
    .insert(joinTokens)
    .values({ id: newId('jt'), secretHash: hashSecret(secret), ...values })
    .returning();
  return { token: token!, secret };
}

/** Revokes a token of the managed pools: new joins with it stop; nodes that joined stay. */
export async function revokeToken(db: Db, id: string, managed: string[] | 'all'): Promise<JoinTokenRow> {
  const [revoked] = await db
    .update(joinTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(joinTokens.id, id), isNull(joinTokens.revokedAt), tokenManagedIn(managed)))
    .returning();
  const token = revoked ?? (await findToken(db, id, managed));
  if (!token) throw new DrydockError('NOT_FOUND', `token ${id} not found`, { tokenId: id });
  return token;
}
