import { z } from 'zod';
import { createApiClient, type Answer, type ApiClient } from '@drydock/client';
import type { CaOffer } from '../domain/signing';
import type { AgentCommand } from './commands';
import type { Connections } from './connections';
import type { Inventory } from './inventory';
import type { Output } from './run-argv';

/** How long a short call (join, heartbeat, ack) may take before it counts as a network failure. */
const CALL_TIMEOUT_MS = 15_000;
/** A long-poll may stay silent this much longer than the wait it asked for. */
const POLL_GRACE_MS = 15_000;

/** A result carries up to 1 MiB of output: it may take longer than a short call on a slow link. */
const RESULT_TIMEOUT_MS = 60_000;

/** What the agent says of the machine at session start (`PUT /v1/agent/facts`). */
export interface AgentFacts {
  bootId: string;
  bootedAt: string;
  actions: {
    name: string;
    params: Record<string, { pattern: string; default?: string }>;
    timeoutSeconds: number;
    restarts: boolean;
  }[];
}

/** How a `run` command ended, as the agent reports it, with what it printed. */
export interface RunReport extends Output {
  status: 'succeeded' | 'failed' | 'returned';
  reason?: string;
  exitCode: number | null;
}

export interface JoinBody {
  token?: string;
  publicKey: string;
  hostname: string;
  displayName?: string;
  poolId?: string;
  inventory: Inventory;
}

/**
 * The agent's side of `/v1/agent/*`, over the shared API client: failures are its `ApiError` (the
 * API answered an error) or `Unreachable` (no answer, or none in time).
 */
export class AgentClient {
  readonly api: string;
  private readonly client: ApiClient;

  constructor(
    api: string,
    private credential: string | undefined,
    private readonly connections: Connections,
  ) {
    this.client = createApiClient({
      baseUrl: api,
      token: () => this.credential,
      timeoutMs: CALL_TIMEOUT_MS,
      fetch: connections.fetch('call'),
    });
    this.api = this.client.baseUrl;
  }

  /**
   * Calls with a renewed credential from now on; a call in flight with the old one that is refused
   * (the old one ended when the new one was first used) is sent again with it.
   */
  useCredential(credential: string): void {
    this.credential = credential;
  }

  /** The same API with a node credential (after joining). */
  withCredential(credential: string): AgentClient {
    return new AgentClient(this.api, credential, this.connections);
  }

  /** Joins as a new node; the join token, if any, is in the body, never a credential. */
  join(body: JoinBody): Promise<Answer<'post', '/v1/agent/join'>> {
    return this.client.POST('/v1/agent/join', { body, headers: { authorization: null } });
  }

  /** Says the node is alive; answers the CA key the API offers (see `caOfferOf`). */
  /**
   * Says the node is alive, from agent run `sessionId`; answers the CA key the API offers (see
   * `caOfferOf`) and when the credential is due for renewal.
   */
  async heartbeat(
    state: 'running' | 'offline',
    sessionId?: string,
    signal?: AbortSignal,
  ): Promise<{ ca: OfferedCa; renewAfter: Date | null }> {
    const answer = await this.client.POST('/v1/agent/heartbeat', {
      body: { ...(state === 'running' ? {} : { state }), ...(sessionId ? { sessionId } : {}) },
      signal,
    });
    const renewAfter = new Date(answer.credential.renewAfter);
    return { ca: caOfferOf(answer), renewAfter: isNaN(renewAfter.getTime()) ? null : renewAfter };
  }

  /** A nonce to sign for `renewCredential`. */
  async renewalNonce(signal?: AbortSignal): Promise<string> {
    return (await this.client.POST('/v1/agent/credentials/nonce', { body: {}, signal })).nonce;
  }

  /** A new credential for the nonce signed with the node's key (docs/lifecycle/enrollment.md). */
  renewCredential(
    body: { nonce: string; signature: string },
    signal?: AbortSignal,
  ): Promise<Answer<'post', '/v1/agent/credentials/renew'>> {
    return this.client.POST('/v1/agent/credentials/renew', { body, signal });
  }

  /** The node's SSH trust: the CA key, its principal, the revoked serials (agent/ssh-files.ts). */
  sshTrust(signal?: AbortSignal): Promise<Answer<'get', '/v1/agent/ssh'>> {
    return this.client.GET('/v1/agent/ssh', { signal });
  }

  /** Long-polls the pending commands: answers when there are some, or after `waitSeconds`. */
  async commands(
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<{ items: AgentCommand[]; ca: OfferedCa }> {
    const answer = await this.client.GET('/v1/agent/commands', {
      params: { query: { wait: waitSeconds } },
      signal,
      fetch: this.connections.fetch('poll'),
      timeoutMs: waitSeconds * 1000 + POLL_GRACE_MS,
    });
    return { items: answer.items, ca: caOfferOf(answer) };
  }

  /**
   * Reports a fault condition (docs/lifecycle/remediation.md); `status: false` says it cleared.
   * Answers how long the condition must hold clear before the agent reports it cleared.
   */
  async reportCondition(
    type: string,
    status: boolean,
    reason?: string,
  ): Promise<{ healthyAfterSeconds: number }> {
    const answer = await this.client.POST('/v1/agent/conditions', {
      body: { type, status, ...(reason ? { reason } : {}) },
    });
    return { healthyAfterSeconds: answer.healthyAfterSeconds };
  }

  /** Says the machine came back from the restarting action of acked command `id`. */
  async returned(id: string, signal?: AbortSignal): Promise<void> {
    await this.client.POST('/v1/agent/commands/{id}/returned', {
      params: { path: { id } },
      body: {},
      signal,
    });
  }

  /** At session start: the machine's boot and the actions this agent runs (`node.booted` on a new boot). */
  async reportFacts(facts: AgentFacts, signal?: AbortSignal): Promise<{ booted: boolean }> {
    const answer = await this.client.PUT('/v1/agent/facts', { body: facts, signal });
    return { booted: answer.booted };
  }

  /** Reports the inventory the discovery command found (`PUT /v1/agent/inventory`). */
  async reportInventory(
    inventory: Inventory,
    signal?: AbortSignal,
  ): Promise<{ changed: boolean; labels: { set: Record<string, string>; removed: string[] } }> {
    const answer = await this.client.PUT('/v1/agent/inventory', { body: inventory, signal });
    return { changed: answer.changed, labels: answer.labels };
  }

  /** Says the agent journaled `run` command `id` and starts it now. */
  async start(id: string, signal?: AbortSignal): Promise<void> {
    await this.client.POST('/v1/agent/commands/{id}/start', { params: { path: { id } }, body: {}, signal });
  }

  /** Says how `run` command `id` ended, with its output. */
  async result(id: string, result: RunReport, signal?: AbortSignal): Promise<void> {
    await this.client.POST('/v1/agent/commands/{id}/result', {
      params: { path: { id } },
      body: result,
      signal,
      timeoutMs: RESULT_TIMEOUT_MS,
    });
  }

  async ack(id: string, signal?: AbortSignal): Promise<void> {
    await this.client.POST('/v1/agent/commands/{id}/ack', { params: { path: { id } }, body: {}, signal });
  }

  async refuse(id: string, reason: string, signal?: AbortSignal): Promise<void> {
    await this.client.POST('/v1/agent/commands/{id}/refuse', {
      params: { path: { id } },
      body: { reason },
      signal,
    });
  }
}

/** The CA key an answer offers: absent (undefined) from an API without one, null when malformed. */
export type OfferedCa = CaOffer | null | undefined;

/** The offer is checked, not trusted: its types come from the document, its content from the wire. */
const CaOfferAnswer = z.object({
  publicKey: z.string().max(2_000),
  endorsements: z.array(z.object({ payload: z.string().max(4_000), signature: z.string().max(200) })).max(64),
});

function caOfferOf(answer: { ca?: unknown }): OfferedCa {
  if (answer.ca === undefined) return undefined;
  const parsed = CaOfferAnswer.safeParse(answer.ca);
  return parsed.success ? parsed.data : null;
}
