import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { workflowOutbox } from '../schema';

/**
 * What waits in the workflow outbox for a worker's dispatcher: how many calls, and how long the
 * oldest has waited. Growing: no worker is up, or Temporal is away (docs/operations.md).
 */
export async function outboxBacklog(db: DbOrTx): Promise<{ waiting: number; oldestSeconds: number | null }> {
  const [row] = await db
    .select({
      waiting: sql<number>`count(*)::int`,
      oldestSeconds: sql<number | null>`extract(epoch from now() - min(${workflowOutbox.createdAt}))::float8`,
    })
    .from(workflowOutbox);
  return {
    waiting: row?.waiting ?? 0,
    oldestSeconds:
      row?.oldestSeconds === null || row?.oldestSeconds === undefined ? null : Math.round(row.oldestSeconds),
  };
}
