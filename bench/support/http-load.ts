import { Agent, request } from 'node:http';

/**
 * A closed-loop HTTP load: `concurrency` lanes, each sending its next request as soon as the last
 * one answered, over keep-alive connections (one per lane), for a warm-up and then a measured
 * window. A request counts in the window when it completes inside it, the way pgbench's logs are
 * read, so the two rates compare.
 */
export interface HttpCall {
  method: 'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: string;
  /** Headers of this call, over the load's own (e.g. each simulated agent's credential). */
  headers?: Record<string, string>;
  /** Told the outcome once the reply is in (a lane's own bookkeeping, e.g. a node's new state). */
  done?: (ok: boolean) => void;
}

export interface HttpLoadOptions {
  port: number;
  host?: string;
  headers: Record<string, string>;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** The next request of a lane. */
  next(lane: number): HttpCall;
  /** Called as the window opens and as it closes (CPU marks); awaited before the load resolves. */
  onWindow?(edge: 'start' | 'end'): unknown;
}

export interface HttpLoadResult {
  /** Requests completed in the window, and their latencies in ms. */
  latenciesMs: number[];
  /** Every request of the run, warm-up and tail included. */
  sent: number;
  succeeded: number;
  /** Non-2xx replies and transport errors, in the window or not. */
  failed: number;
  failedInWindow: number;
  failures: string[];
  statusCounts: Record<string, number>;
  windowMs: number;
}

export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const host = options.host ?? '127.0.0.1';
  const started = performance.now();
  const windowStart = started + options.warmupMs;
  const windowEnd = windowStart + options.durationMs;
  const result: HttpLoadResult = {
    latenciesMs: [],
    sent: 0,
    succeeded: 0,
    failed: 0,
    failedInWindow: 0,
    failures: [],
    statusCounts: {},
    windowMs: options.durationMs,
  };
  const marks: Promise<unknown>[] = [];
  const mark = (edge: 'start' | 'end', at: number) =>
    new Promise<void>((resolve) =>
      setTimeout(
        () => {
          marks.push(Promise.resolve(options.onWindow?.(edge)));
          resolve();
        },
        Math.max(0, at - performance.now()),
      ),
    );
  const windowMarks = Promise.all([mark('start', windowStart), mark('end', windowEnd)]);

  const send = (call: HttpCall) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const body = call.body ?? '';
      const req = request(
        {
          agent,
          host,
          port: options.port,
          method: call.method,
          path: call.path,
          headers: {
            ...options.headers,
            ...call.headers,
            ...(call.body === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
          },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            res.resume();
            res.once('end', () => resolve({ status, text: '' }));
          } else {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.once('end', () => resolve({ status, text }));
          }
          res.once('error', reject);
        },
      );
      req.once('error', reject);
      req.end(body);
    });

  const lane = async (index: number) => {
    while (performance.now() < windowEnd) {
      const call = options.next(index);
      result.sent++;
      const t0 = performance.now();
      let ok = false;
      let failure = '';
      try {
        const reply = await send(call);
        ok = reply.status >= 200 && reply.status < 300;
        result.statusCounts[reply.status] = (result.statusCounts[reply.status] ?? 0) + 1;
        if (!ok) failure = `${call.method} ${call.path}: ${reply.status} ${reply.text.slice(0, 300)}`;
      } catch (error) {
        result.statusCounts.error = (result.statusCounts.error ?? 0) + 1;
        failure = `${call.method} ${call.path}: ${(error as Error).message}`;
      }
      const t1 = performance.now();
      call.done?.(ok);
      const inWindow = t1 >= windowStart && t1 <= windowEnd;
      if (ok) {
        result.succeeded++;
        if (inWindow) result.latenciesMs.push(t1 - t0);
      } else {
        result.failed++;
        if (inWindow) result.failedInWindow++;
        if (result.failures.length < 5) result.failures.push(failure);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, i) => lane(i)));
    await windowMarks;
    await Promise.all(marks);
  } finally {
    agent.destroy();
  }
  return result;
}
