import { count } from 'drizzle-orm';
import { newId } from '../domain/ids';
import type { Db } from '../db/client';
import { allocations, nodeLabels, nodes, pools } from '../db/schema';

const HOUR = 3_600_000;

/**
 * The demo fleet of DESIGN.md: two tenants, three pools, a dozen nodes with labels and live
 * allocations of various end times. Does nothing when the database already holds pools.
 * Returns the ids of the nodes it created (empty when it seeded nothing).
 */
export async function seedDemoFleet(db: Db): Promise<string[]> {
  const [existing] = await db.select({ n: count() }).from(pools);
  if ((existing?.n ?? 0) > 0) return [];
  return db.transaction(async (tx) => {
    await tx.insert(pools).values([
      {
        id: 'pool-h100-east',
        kind: 'bare-metal',
        siteId: 'fra1',
        tenantId: 'acme',
        policy: { maxUnavailable: 2 },
      },
      {
        id: 'pool-a100-cloud',
        kind: 'provider',
        siteId: 'ams2',
        tenantId: 'globex',
        policy: { lostAfter: '10m', maxUnhealthy: '40%' },
      },
      {
        id: 'pool-vps-fra',
        kind: 'vps-host',
        siteId: 'fra1',
        tenantId: 'acme',
        grants: ['globex'],
        policy: {},
      },
    ]);
    const plan = [
      { pool: 'pool-h100-east', tenant: 'acme', site: 'fra1', prefix: 'gpu-b7', gpu: 'H100', count: 5 },
      { pool: 'pool-a100-cloud', tenant: 'globex', site: 'ams2', prefix: 'a100', gpu: 'A100', count: 4 },
      { pool: 'pool-vps-fra', tenant: 'acme', site: 'fra1', prefix: 'vps', gpu: 'L4', count: 3 },
    ];
    const ids: string[] = [];
    const now = Date.now();
    for (const group of plan) {
      for (let i = 1; i <= group.count; i++) {
        const id = newId('node');
        const hostname = `${group.prefix}-${String(i).padStart(2, '0')}`;
        ids.push(id);
        await tx.insert(nodes).values({
          id,
          tenantId: group.tenant,
          poolId: group.pool,
          siteId: group.site,
          hostname,
          displayName: hostname.toUpperCase(),
          provisionState: 'adopted',
          connectivity: 'connected',
          liveness: 'alive',
          lastSeenAt: new Date(now),
        });
        await tx.insert(nodeLabels).values([
          { nodeId: id, key: 'gpu.model', value: group.gpu, source: 'inventory' },
          { nodeId: id, key: 'gpu.count', value: '8', source: 'inventory' },
          { nodeId: id, key: 'rack', value: `r${(i % 2) + 1}`, source: 'operator' },
        ]);
        // Allocations ending in 1–3 hours, plus one open-ended reservation on every other node.
        const live: (typeof allocations.$inferInsert)[] = [1, 2, 3].slice(0, (i % 3) + 1).map((h) => ({
          id: newId('alloc'),
          nodeId: id,
          tenantId: group.tenant,
          kind: 'job',
          endsAt: new Date(now + h * HOUR),
        }));
        if (i % 2 === 0) live.push({ id: newId('alloc'), nodeId: id, tenantId: group.tenant, kind: 'lease' });
        await tx.insert(allocations).values(live);
      }
    }
    return ids;
  });
}
