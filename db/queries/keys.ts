import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { apiKeys } from '../schema';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function listKeys(db: DbOrTx): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).orderBy(asc(apiKeys.id));
}

export async function findKey(db: DbOrTx, id: string): Promise<ApiKeyRow | undefined> {
  const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
  return key;
}
