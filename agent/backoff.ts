/**
 * The longest wait between retries. An operator who unblocks a node expects it back within ten
 * seconds (docs/lifecycle/enrollment.md): a retry at most 5 s after the unblock, plus the call, leaves room.
 */
export const BACKOFF_CAP_MS = 5_000;
const BACKOFF_BASE_MS = 250;

/**
 * Exponential backoff with "equal jitter": each wait is between half and all of base·2ⁿ, capped.
 * The jitter spreads a fleet's retries after an API restart; the half kept avoids hot retries.
 */
export class Backoff {
  private attempt = 0;

  constructor(private readonly options: { baseMs?: number; capMs?: number; random?: () => number } = {}) {}

  next(): number {
    const { baseMs = BACKOFF_BASE_MS, capMs = BACKOFF_CAP_MS, random = Math.random } = this.options;
    const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(ceiling / 2 + random() * (ceiling / 2));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
