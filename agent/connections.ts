import http from 'node:http';
import https from 'node:https';
import type { Fetch } from '@drydock/client';

/** Answers larger than this are not Drydock's. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** What a request is for: a short call, or a long-poll that holds its socket for the whole wait. */
export type Purpose = 'call' | 'poll';

/**
 * Keep-alive connection pools, shared by every client made with them. Short calls share a capped
 * pool, so a thousand simulated agents reuse a few dozen sockets; long-polls hold their socket for
 * up to the whole wait, so they get a pool of their own and never queue heartbeats behind them.
 */
export class Connections {
  private readonly pools = new Map<string, http.Agent>();

  constructor(private readonly options: { maxSockets?: number; maxPollSockets?: number } = {}) {}

  agentFor(url: URL, purpose: Purpose): http.Agent {
    const key = `${url.protocol}${purpose}`;
    let agent = this.pools.get(key);
    if (!agent) {
      const settings: http.AgentOptions = {
        keepAlive: true,
        maxSockets:
          purpose === 'call' ? (this.options.maxSockets ?? 16) : (this.options.maxPollSockets ?? Infinity),
        // Let go of an idle socket before the server does (Node's server keeps one 5 s), so a
        // request is rarely written to a socket the server is closing.
        timeout: 4_000,
      };
      agent = url.protocol === 'https:' ? new https.Agent(settings) : new http.Agent(settings);
      this.pools.set(key, agent);
    }
    return agent;
  }

  /** A `fetch` for the API client that sends over the pool for `purpose`. */
  fetch(purpose: Purpose): Fetch {
    return async (request) => {
      const url = new URL(request.url);
      const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
      const headers = Object.fromEntries(request.headers);
      if (body) headers['content-length'] = String(body.length);
      return send(url, {
        method: request.method,
        headers,
        body,
        agent: this.agentFor(url, purpose),
        signal: request.signal,
      });
    };
  }

  /** Closes every socket, in use or idle. */
  close(): void {
    for (const agent of this.pools.values()) agent.destroy();
    this.pools.clear();
  }
}

/** One request over node:http; fails as `fetch` does: a TypeError whose `cause` says why. */
function send(
  url: URL,
  options: {
    method: string;
    headers: Record<string, string>;
    body?: Buffer;
    agent: http.Agent;
    signal: AbortSignal;
  },
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const { method, headers, agent, signal } = options;
    const fail = (error: Error) =>
      reject(signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(url, { method, headers, agent, signal }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) request.destroy(new Error('the answer is too large'));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const one of [value ?? []].flat()) answer.append(name, one);
        }
        const status = response.statusCode ?? 0;
        const text = status === 204 || status === 304 ? null : Buffer.concat(chunks);
        resolve(new Response(text, { status, headers: answer }));
      });
      response.on('error', fail);
    });
    request.on('error', fail);
    request.end(options.body);
  });
}
