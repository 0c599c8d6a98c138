import http from 'node:http';
import https from 'node:https';
import { z } from 'zod';
import type { CaOffer } from '../domain/signing';
import type { AgentCommand } from './commands';
import type { Inventory } from './inventory';

/** How long a short call (join, heartbeat, ack) may take before it counts as a network failure. */
const CALL_TIMEOUT_MS = 15_000;
/** A long-poll may stay silent this much longer than the wait it asked for. */
const POLL_GRACE_MS = 15_000;
/** Answers larger than this are not Drydock's. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The API answered with an error status (the error envelope of docs/api.md, when it sent one). */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiRefusal';
  }
}

/** The API could not be reached, or the connection broke before it answered. */
export class Unreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Unreachable';
  }
}

/**
 * Keep-alive connection pools, shared by every client made with them. Short calls share a capped
 * pool, so a thousand simulated agents reuse a few dozen sockets; long-polls hold their socket for
 * up to the whole wait, so they get a pool of their own and never queue heartbeats behind them.
 */
export class Connections {
  private readonly pools = new Map<string, http.Agent>();

  constructor(private readonly options: { maxSockets?: number; maxPollSockets?: number } = {}) {}

  agentFor(url: URL, purpose: 'call' | 'poll'): http.Agent {
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

  /** Closes every socket, in use or idle. */
  close(): void {
    for (const agent of this.pools.values()) agent.destroy();
    this.pools.clear();
  }
}

export interface JoinBody {
  token?: string;
  publicKey: string;
  hostname: string;
  displayName?: string;
  poolId?: string;
  inventory: Inventory;
}

export interface JoinAnswer {
  nodeId: string;
  credential: string;
  clusterId: string;
  caPublicKey: string;
  provisionState: string;
}

/** The agent's side of `/v1/agent/*`: JSON in and out, failures as `ApiRefusal` or `Unreachable`. */
export class AgentClient {
  readonly api: string;

  constructor(
    api: string,
    private readonly credential: string | undefined,
    private readonly connections: Connections,
  ) {
    this.api = api.replace(/\/+$/, '');
  }

  /** The same API with a node credential (after joining). */
  withCredential(credential: string): AgentClient {
    return new AgentClient(this.api, credential, this.connections);
  }

  join(body: JoinBody): Promise<JoinAnswer> {
    return this.call<JoinAnswer>('POST', '/v1/agent/join', { body, anonymous: true });
  }

  /** Says the node is alive; answers the CA key the API offers (see `caOfferOf`). */
  async heartbeat(state: 'running' | 'offline', signal?: AbortSignal): Promise<OfferedCa> {
    const answer = await this.call<{ ca?: unknown } | undefined>('POST', '/v1/agent/heartbeat', {
      body: state === 'running' ? {} : { state },
      signal,
    });
    return caOfferOf(answer);
  }

  /** Long-polls the pending commands: answers when there are some, or after `waitSeconds`. */
  async commands(
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<{ items: AgentCommand[]; ca: OfferedCa }> {
    const answer = await this.call<{ items: AgentCommand[]; ca?: unknown }>(
      'GET',
      `/v1/agent/commands?wait=${waitSeconds}`,
      {
        signal,
        purpose: 'poll',
        timeoutMs: waitSeconds * 1000 + POLL_GRACE_MS,
      },
    );
    return { items: answer.items, ca: caOfferOf(answer) };
  }

  /** Reports a fault condition (docs/lifecycle/remediation.md); `status: false` says it cleared. */
  async reportCondition(type: string, status: boolean, reason?: string): Promise<void> {
    await this.call('POST', '/v1/agent/conditions', {
      body: { type, status, ...(reason ? { reason } : {}) },
    });
  }

  async ack(id: string, signal?: AbortSignal): Promise<void> {
    await this.call('POST', `/v1/agent/commands/${encodeURIComponent(id)}/ack`, { body: {}, signal });
  }

  async refuse(id: string, reason: string, signal?: AbortSignal): Promise<void> {
    await this.call('POST', `/v1/agent/commands/${encodeURIComponent(id)}/refuse`, {
      body: { reason },
      signal,
    });
  }

  private async call<T>(
    method: string,
    path: string,
    options: {
      body?: unknown;
      signal?: AbortSignal;
      anonymous?: boolean;
      purpose?: 'call' | 'poll';
      timeoutMs?: number;
    } = {},
  ): Promise<T> {
    const url = new URL(this.api + path);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (!options.anonymous && this.credential) headers.authorization = `Bearer ${this.credential}`;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const answer = await send(url, {
      method,
      headers,
      body,
      agent: this.connections.agentFor(url, options.purpose ?? 'call'),
      timeoutMs: options.timeoutMs ?? CALL_TIMEOUT_MS,
      signal: options.signal,
    });
    let parsed: unknown;
    try {
      parsed = answer.text ? JSON.parse(answer.text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (answer.status >= 200 && answer.status < 300) return parsed as T;
    const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)
      ?.error;
    if (typeof error?.code === 'string' && typeof error.message === 'string') {
      throw new ApiRefusal(
        answer.status,
        error.code,
        error.message,
        (error.details as Record<string, unknown> | undefined) ?? {},
      );
    }
    throw new ApiRefusal(
      answer.status,
      'BAD_RESPONSE',
      `${method} ${url.pathname} answered ${answer.status}`,
    );
  }
}

/** The CA key an answer offers: absent (undefined) from an API without one, null when malformed. */
export type OfferedCa = CaOffer | null | undefined;

const CaOfferAnswer = z.object({
  publicKey: z.string().max(2_000),
  endorsements: z.array(z.object({ payload: z.string().max(4_000), signature: z.string().max(200) })).max(64),
});

function caOfferOf(answer: { ca?: unknown } | undefined): OfferedCa {
  if (answer?.ca === undefined) return undefined;
  const parsed = CaOfferAnswer.safeParse(answer.ca);
  return parsed.success ? parsed.data : null;
}

function send(
  url: URL,
  options: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    agent: http.Agent;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(
      url,
      { method: options.method, headers: options.headers, agent: options.agent, signal: options.signal },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) request.destroy(new Error('the answer is too large'));
          else chunks.push(chunk);
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', (error) => reject(unreachable(url, error)));
      },
    );
    request.setTimeout(options.timeoutMs, () =>
      request.destroy(new Error(`no answer within ${Math.round(options.timeoutMs / 1000)} s`)),
    );
    request.on('error', (error) => reject(unreachable(url, error)));
    request.end(options.body);
  });
}

function unreachable(url: URL, error: Error): Unreachable {
  const code = (error as { code?: unknown }).code;
  const detail = typeof code === 'string' && code !== 'ABORT_ERR' ? code : error.message;
  return new Unreachable(`cannot reach ${url.origin} (${detail})`);
}
