import { DrydockError } from '../../domain/errors';
import type { Db } from '../../db/client';
import { isUniqueViolation } from '../../db/errors';
import type { PoolRow } from '../../db/queries/pools';
import { pools } from '../../db/schema';

/** Creates a pool; CONFLICT when its id is taken. */
export async function createPool(
  db: Db,
  values: Pick<PoolRow, 'id' | 'kind' | 'siteId' | 'tenantId' | 'grants' | 'policy'>,
): Promise<PoolRow> {
  try {
    const [pool] = await db.insert(pools).values(values).returning();
    return pool!;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DrydockError('CONFLICT', `pool ${values.id} already exists`);
    throw error;
  }
}
