import { and, eq, gte, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { CapacityBucket } from '../../domain/capacity';
import type { Db } from '../client';
import { capacityHistory } from '../schema';

/** A pool's capacity over one step of its history: the minutes' average count per bucket. */
export type CapacityPoint = { at: Date; total: number } & Record<CapacityBucket, number>;

/**
 * A pool's recorded capacity from `since`, one point per `stepMinutes` (the average of the minutes
 * recorded in it, to one decimal), oldest first; steps with no minute recorded are absent.
 */
export async function capacityHistoryOf(
  db: Db,
  poolId: string,
  since: Date,
  stepMinutes: number,
): Promise<CapacityPoint[]> {
  const average = (column: AnyPgColumn) => sql<string>`round(avg(${column}), 1)`;
  const h = capacityHistory;
  const rows = await db
    .select({
      at: sql<Date>`date_bin(make_interval(mins => ${stepMinutes}), ${h.at}, timestamptz 'epoch')`.mapWith(
        h.at,
      ),
      total: average(h.total),
      schedulable: average(h.schedulable),
      cordoned: average(h.cordoned),
      unhealthy: average(h.unhealthy),
      maintenance: average(h.maintenance),
      unreachable: average(h.unreachable),
    })
    .from(h)
    .where(and(eq(h.poolId, poolId), gte(h.at, since)))
    // By the select's first column, the step: its parameter is sent once.
    .groupBy(sql`1`)
    .orderBy(sql`1`);
  return rows.map((row) => ({
    at: row.at,
    total: Number(row.total),
    schedulable: Number(row.schedulable),
    cordoned: Number(row.cordoned),
    unhealthy: Number(row.unhealthy),
    maintenance: Number(row.maintenance),
    unreachable: Number(row.unreachable),
  }));
}
