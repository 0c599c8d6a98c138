export interface Pacing {
  /** At most this many calls in flight at once. */
  concurrency: number;
  /** When set, call i starts no earlier than i / ratePerSecond seconds after the first. */
  ratePerSecond?: number;
}

/**
 * Calls `fn` for every item with bounded concurrency (and an optional steady start rate);
 * the first failure stops new calls and is thrown once the calls in flight have settled.
 */
export async function paced<T>(
  items: readonly T[],
  pacing: Pacing,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const started = performance.now();
  const interval = pacing.ratePerSecond ? 1000 / pacing.ratePerSecond : 0;
  const lane = async () => {
    while (failure === null && next < items.length) {
      const index = next++;
      const wait = started + index * interval - performance.now();
      if (wait > 0) await sleep(wait);
      try {
        await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(pacing.concurrency, items.length)) }, lane));
  if (failure) throw (failure as { error: unknown }).error;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `intervalMs` until it returns true, or throws `what` after `timeoutMs`. */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(intervalMs);
  }
}
