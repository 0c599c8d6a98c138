import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createLivenessActivities } from '../../activities/liveness';
import { recordCapacity } from '../../db/capacity-history';
import { capacityHistory } from '../../db/schema';
import { DEFAULT_LIVENESS } from '../../domain/liveness';
import { setNode } from '../support/builders';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

const MINUTE = 60_000;
const minuteOf = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE);

/** A pool of three live nodes of `tenantId`; returns its id and the nodes'. */
async function poolOfThree(tenantId: string) {
  const poolId = `pool-cap-${Math.random().toString(36).slice(2, 8)}`;
  await seedPool(h, { id: poolId, tenantId });
  const nodes = [];
  for (let i = 0; i < 3; i++) nodes.push(await seedNode(h, { poolId }));
  return { poolId, nodes };
}

const rowsOf = (poolId: string) =>
  h.db.select().from(capacityHistory).where(eq(capacityHistory.poolId, poolId)).orderBy(capacityHistory.at);

interface History {
  poolId: string;
  window: string;
  stepSeconds: number;
  points: { at: string; total: number; schedulable: number; cordoned: number; unreachable: number }[];
}

describe('capacity history', () => {
  it("the liveness sweep records each pool's capacity for its minute, after the sweep's changes", async () => {
    const { poolId, nodes } = await poolOfThree('acme');
    expect((await call(h, 'POST', `/v1/nodes/${nodes[0]}/cordon`, { body: {} })).status).toBe(200);
    const before = Date.now();
    await createLivenessActivities(h.db).sweepLiveness(DEFAULT_LIVENESS);
    const rows = await rowsOf(poolId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.at.getTime()).toBeGreaterThanOrEqual(minuteOf(before).getTime());
    expect(rows[0]!.at.getTime()).toBeLessThanOrEqual(Date.now());
    expect(rows[0]).toMatchObject({ total: 3, schedulable: 2, cordoned: 1, unreachable: 0, maintenance: 0 });
  });

  it('records no decommissioned node: out of service for good, it is not capacity unreachable', async () => {
    const { poolId, nodes } = await poolOfThree('acme');
    await setNode(h, nodes[0]!, {
      provisionState: 'decommissioned',
      liveness: 'decommissioned',
      cordoned: true,
      version: 1,
    });
    await recordCapacity(h.db, new Date(), 30);
    expect(await rowsOf(poolId)).toMatchObject([{ total: 2, schedulable: 2, unreachable: 0 }]);
  });

  it('writes a minute once: a second record in the same minute changes nothing', async () => {
    const { poolId, nodes } = await poolOfThree('acme');
    const at = new Date(minuteOf(Date.now() - 5 * MINUTE).getTime() + 10_000);
    expect(await recordCapacity(h.db, at, 30)).toBeGreaterThanOrEqual(1);
    await call(h, 'POST', `/v1/nodes/${nodes[0]}/cordon`, { body: {} });
    // Another worker's sweep in the same minute, after a cordon: the minute keeps its first count.
    await recordCapacity(h.db, new Date(at.getTime() + 20_000), 30);
    expect((await rowsOf(poolId)).map((r) => [r.at.toISOString(), r.schedulable, r.cordoned])).toEqual([
      [minuteOf(at.getTime()).toISOString(), 3, 0],
    ]);
  });

  it('answers the recorded minutes averaged per step of the window, oldest first', async () => {
    const { poolId, nodes } = await poolOfThree('acme');
    // Two minutes in one 10-minute step, 30 minutes ago, one node cordoned between them.
    const step = Math.floor((Date.now() - 30 * MINUTE) / (10 * MINUTE)) * 10 * MINUTE;
    // And one 3 days ago, before the cordon: in the week, not in the day.
    await recordCapacity(h.db, new Date(Date.now() - 3 * 24 * 60 * MINUTE), 30);
    await recordCapacity(h.db, new Date(step + MINUTE), 30);
    await call(h, 'POST', `/v1/nodes/${nodes[0]}/cordon`, { body: {} });
    await recordCapacity(h.db, new Date(step + 2 * MINUTE), 30);

    const day = await call<History>(h, 'GET', `/v1/pools/${poolId}/capacity/history`);
    expect(day.status).toBe(200);
    expect(day.body).toMatchObject({ poolId, window: '24h', stepSeconds: 600 });
    expect(day.body.points).toEqual([
      {
        at: new Date(step).toISOString(),
        total: 3,
        schedulable: 2.5,
        cordoned: 0.5,
        unhealthy: 0,
        maintenance: 0,
        unreachable: 0,
      },
    ]);
    const hour = await call<History>(h, 'GET', `/v1/pools/${poolId}/capacity/history?window=1h`);
    expect(hour.body.points.map((p) => [p.at, p.schedulable, p.cordoned])).toEqual([
      [new Date(step + MINUTE).toISOString(), 3, 0],
      [new Date(step + 2 * MINUTE).toISOString(), 2, 1],
    ]);
    const week = await call<History>(h, 'GET', `/v1/pools/${poolId}/capacity/history?window=7d`);
    expect(week.body.stepSeconds).toBe(3600);
    expect(week.body.points).toHaveLength(2);
    expect(week.body.points[0]).toMatchObject({ schedulable: 3, cordoned: 0 });
  });

  it('keeps the configured days: older minutes go when a minute is recorded', async () => {
    const { poolId } = await poolOfThree('acme');
    await recordCapacity(h.db, new Date(Date.now() - 3 * 24 * 60 * MINUTE), 30);
    await recordCapacity(h.db, new Date(Date.now() - 1 * 24 * 60 * MINUTE), 30);
    expect(await rowsOf(poolId)).toHaveLength(2);
    await recordCapacity(h.db, new Date(), 2);
    const left = await rowsOf(poolId);
    expect(left).toHaveLength(2);
    expect(left.every((r) => r.at.getTime() > Date.now() - 2 * 24 * 60 * MINUTE)).toBe(true);
  });

  it("shows a tenant its own pools' history only, and refuses an unknown window", async () => {
    const own = await poolOfThree('cap-own');
    const other = await poolOfThree('cap-other');
    const key = await tenantKey(h, 'cap-own', ['compute:nodes:read']);
    const path = (poolId: string) => `/v1/pools/${poolId}/capacity/history`;
    expect((await call(h, 'GET', path(own.poolId), { token: key.secret })).status).toBe(200);
    expect((await call(h, 'GET', path(other.poolId), { token: key.secret })).status).toBe(404);
    const bad = await call(h, 'GET', `${path(own.poolId)}?window=30d`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_INPUT');
    // Nothing was recorded by reading.
    expect(
      await h.db
        .select()
        .from(capacityHistory)
        .where(and(eq(capacityHistory.poolId, own.poolId))),
    ).toEqual([]);
  });
});
