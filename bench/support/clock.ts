import type postgres from 'postgres';

/**
 * Wall-clock epoch milliseconds with sub-millisecond resolution: performance.now() plus the offset
 * to Date.now(). Postgres' now() and Temporal's event times read the same host clock, so
 * differences between them and this are latencies.
 */
export interface WallClock {
  (): number;
  /** How far the offset moved since the start (ms): clock steps or slewing during the run. */
  drift(): number;
}

export function createWallClock(): WallClock {
  const anchor = measureAnchor();
  const now = () => anchor + performance.now();
  return Object.assign(now, { drift: () => measureAnchor() - anchor });
}

/**
 * Date.now() - performance.now(), to a few microseconds. Date.now() floors to the millisecond and
 * a preemption between the two reads only lowers a sample, so the largest of many samples taken
 * over a few milliseconds is the offset.
 */
function measureAnchor(): number {
  let best = -Infinity;
  const until = performance.now() + 20;
  while (performance.now() < until) {
    const sample = Date.now() - performance.now();
    if (sample > best) best = sample;
  }
  return best;
}

/**
 * Postgres' clock minus ours, in ms (best of a few round trips): near zero on one host; a large
 * value means the database runs elsewhere and its timestamps cannot be compared with ours.
 */
export async function postgresClockOffset(sql: postgres.Sql, now: () => number): Promise<number> {
  let best = { rtt: Infinity, offset: NaN };
  for (let i = 0; i < 7; i++) {
    const before = now();
    const [row] = await sql<{ ms: string }[]>`select extract(epoch from clock_timestamp()) * 1000 as ms`;
    const after = now();
    if (after - before < best.rtt)
      best = { rtt: after - before, offset: Number(row!.ms) - (before + after) / 2 };
  }
  return best.offset;
}
