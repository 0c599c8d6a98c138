import type { Recorder } from './report';

export interface Reply {
  status: number;
  body: any;
}

export interface CallOptions {
  body?: unknown;
  idempotencyKey?: string;
  token?: string;
  /**
   * One attempt only: for a call with no idempotency of its own (placing an allocation), whose
   * failed attempt may still have happened; the caller looks before it tries again.
   */
  once?: boolean;
}

/** An attempt that failed without an answer: it may or may not have taken effect. */
export class CallLost extends Error {}

/** How long one call keeps retrying across the APIs before the soak counts it lost. */
const GIVE_UP_MS = 90_000;

/**
 * The soak's HTTP client, as a load balancer in front of the APIs plus a careful caller: calls go
 * round-robin over the API URLs; one that fails by connection error or a 5xx is sent again, to the
 * next API, with the same body and the same Idempotency-Key, so a retry never starts a second
 * operation. Every attempt's latency and every retried error land in the recorder's current phase.
 */
export class SoakClient {
  private next = 0;

  constructor(
    private readonly urls: string[],
    private readonly token: string,
    private readonly recorder: Recorder,
  ) {}

  async call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const giveUpAt = Date.now() + GIVE_UP_MS;
    for (let attempt = 0; ; attempt++) {
      const url = this.urls[this.next++ % this.urls.length]!;
      const started = performance.now();
      let failure: string;
      try {
        const response = await fetch(url + path, {
          method,
          headers: {
            authorization: `Bearer ${options.token ?? this.token}`,
            ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
          },
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        this.recorder.call(performance.now() - started);
        if (response.status < 500) return { status: response.status, body: text ? JSON.parse(text) : null };
        failure = `${response.status} ${safeCode(text)}`;
      } catch (error) {
        failure = connectionError(error);
      }
      this.recorder.error(`${method} ${routeOf(path)}: ${failure}`);
      if (options.once) throw new CallLost(`${method} ${path}: ${failure}`);
      if (Date.now() > giveUpAt)
        throw new Error(`${method} ${path}: still failing after ${attempt + 1} attempts (${failure})`);
      await new Promise((r) => setTimeout(r, Math.min(1_000, 100 * 2 ** Math.min(attempt, 4))));
    }
  }

  /** A call that must answer one of `expected`; anything else is a soak failure with the reply. */
  async expect(expected: number[], method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const reply = await this.call(method, path, options);
    if (!expected.includes(reply.status)) {
      throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    return reply;
  }
}

function connectionError(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error as Error).name ?? 'error';
}

function safeCode(text: string): string {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
  } catch {
    return '';
  }
}

/** The path with ids folded, so that errors group by route. */
const routeOf = (path: string) => path.replace(/\/(node|op|alloc|cmd)_[^/?]+/g, '/:id').replace(/\?.*/, '');
