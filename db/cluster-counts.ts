import { count, eq, isNull } from 'drizzle-orm';
import type { ClusterCounts } from '../observability/metrics';
import type { Db } from './client';
import { disruptions, nodes, operations } from './schema';

/**
 * The cluster-wide figures the worker's gauges read at each scrape: small aggregate reads (the
 * open operations are a partial index, the disruption rows a handful).
 */
export function clusterCounts(db: Db): ClusterCounts {
  return {
    async runningOperations() {
      return db
        .select({ kind: operations.kind, count: count() })
        .from(operations)
        .where(eq(operations.status, 'running'))
        .groupBy(operations.kind);
    },
    async nodesByLiveness() {
      return db
        .select({ liveness: nodes.liveness, count: count() })
        .from(nodes)
        .where(isNull(nodes.deletedAt))
        .groupBy(nodes.liveness);
    },
    async drainsWaitingForBudget() {
      const [row] = await db
        .select({ count: count() })
        .from(disruptions)
        .where(eq(disruptions.state, 'waiting'));
      return row?.count ?? 0;
    },
  };
}
