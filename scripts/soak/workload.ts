import { randomUUID } from 'node:crypto';
import { createSimulator, type Simulator } from '../../agent/simulator';
import { CallLost, type SoakClient } from './client';
import { sleep } from './random';
import type { Recorder } from './report';

/** How much of each kind one soak runs, and how many at once. */
export interface WorkloadSize {
  drains: number;
  drainNodes: number;
  decommissions: number;
  purges: number;
  remediations: number;
}

export const QUICK: WorkloadSize = {
  drains: 40,
  drainNodes: 10,
  decommissions: 3,
  purges: 3,
  remediations: 3,
};
export const LONG: WorkloadSize = {
  drains: 1_000,
  drainNodes: 40,
  decommissions: 50,
  purges: 40,
  remediations: 40,
};

/** One operation the soak started, as it saw it end. */
export interface Started {
  kind: 'drain' | 'decommission' | 'purge' | 'remediation';
  id: string;
  nodeId: string;
  /** The status the soak read when it stopped waiting (a terminal one unless it gave up). */
  status: string;
  ms: number;
}

interface UnderWay {
  since: number;
  operation?: { id: string; status: string };
}

const describeUnderWay = (what: string, { since, operation }: UnderWay) =>
  `${what} (${operation ? `${operation.id} ${operation.status}, ` : ''}${Math.round((Date.now() - since) / 1000)} s)`;

const TENANT = 'soak';
const CONDITION = 'SoakFault';
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** An operation not finished this long after it started counts as stuck (an invariant reports it). */
const OPERATION_WAIT_MS = 150_000;

/**
 * Drydock under a steady mix of operations, through the soak client (both APIs) and simulated agents
 * (one simulator per API, as agents spread over a load balancer's addresses).
 */
export class Workload {
  readonly started: Started[] = [];
  readonly failures: string[] = [];
  /** What is under way now ("drain of node_…"), since when, and its operation as last read. */
  private readonly underWay = new Map<string, UnderWay>();
  private simulators: Simulator[] = [];

  constructor(
    private readonly client: SoakClient,
    private readonly apiUrls: string[],
    private readonly recorder: Recorder,
    private readonly random: () => number,
  ) {}

  /** Pools, a join token and the agents of every node the run needs. */
  async setUp(size: WorkloadSize) {
    const policy = {
      maxUnavailable: '100%',
      maxUnhealthy: '100%',
      remediation: {
        [CONDITION]: { ladder: ['reset-accelerator', 'reboot'], attemptTimeout: '60s', healthyAfter: '0' },
      },
    };
    await this.client.expect([201, 409], 'POST', '/v1/pools', {
      body: { id: 'soak', kind: 'bare-metal', siteId: 'soak', tenantId: TENANT, policy },
    });
    const token = (
      await this.client.expect([201], 'POST', '/v1/tokens', {
        body: { poolId: 'soak', ttl: '2h', maxUses: 0 },
      })
    ).body.secret as string;
    const total = size.drainNodes + size.decommissions + size.purges + size.remediations + 1;
    const perApi = this.apiUrls.map(
      (_, i) => Math.floor(total / this.apiUrls.length) + (i < total % this.apiUrls.length ? 1 : 0),
    );
    this.simulators = await Promise.all(
      this.apiUrls.map((api, i) =>
        createSimulator({
          api,
          token,
          count: perApi[i],
          hostnamePrefix: `soak-${i}`,
          heartbeatEveryMs: 5_000,
          pollWaitSeconds: 20,
          joinConcurrency: 4,
          backoff: { baseMs: 100, capMs: 1_000 },
        }),
      ),
    );
    for (const s of this.simulators) s.remediation('clear');
    const ids = this.simulators.flatMap((s) => s.agents.map((a) => a.nodeId));
    let at = 0;
    const take = (n: number) => ids.slice(at, (at += n));
    return {
      drain: take(size.drainNodes),
      decommission: take(size.decommissions),
      purge: take(size.purges),
      remediation: take(size.remediations),
      probe: take(1)[0]!,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.simulators.map((s) => s.close()));
  }

  /**
   * Drains over `nodeIds`, each node draining again once its last drain ended: at least `count` in
   * all, and on until `ended()` says the load is over.
   */
  async drains(nodeIds: string[], count: number, ended: () => boolean): Promise<void> {
    let left = count;
    await Promise.all(
      nodeIds.map(async (nodeId) => {
        while (left > 0 || !ended()) {
          left -= 1;
          await this.guard(`drain of ${nodeId}`, () => this.drainOnce(nodeId));
        }
      }),
    );
  }

  /**
   * One drain cycle: a few allocations (one may end by itself soon), the drain (a fifth with a
   * deadline, one allocation kept so that the deadline force-releases it), releases at random
   * moments, the wait for its end, and the uncordon that readies the node for the next cycle.
   */
  async drainOnce(nodeId: string): Promise<Started> {
    const withDeadline = this.random() < 0.2;
    const allocations: string[] = [];
    const count = 1 + Math.floor(this.random() * 3);
    for (let i = 0; i < count; i++) {
      // Some end by themselves, 5–10 s after they are placed (counted from each attempt).
      const lifetimeMs = this.random() < 0.2 ? 5_000 + this.random() * 5_000 : undefined;
      allocations.push(await this.place(nodeId, allocations, lifetimeMs));
    }
    const body = { reason: 'soak', ...(withDeadline ? { deadline: '4s' } : {}) };
    const op = (
      await this.client.expect([200, 202], 'POST', `/v1/nodes/${nodeId}/drain`, {
        body,
        idempotencyKey: randomUUID(),
      })
    ).body.operation;
    const releases = (withDeadline ? allocations.slice(1) : allocations).map(async (id) => {
      await sleep(this.random() * 2_000);
      await this.client.expect([200], 'POST', `/v1/allocations/${id}/release`, { body: {} });
    });
    const [ended] = await Promise.all([this.waitFor('drain', op.id, nodeId), ...releases]);
    await this.client.expect([200], 'POST', `/v1/nodes/${nodeId}/uncordon`, { body: {} });
    return ended;
  }

  /**
   * Places an allocation. Placing has no Idempotency-Key: after an attempt lost in flight the soak
   * looks at the node's live allocations and takes one it does not know as the lost attempt's.
   */
  private async place(nodeId: string, known: string[], lifetimeMs?: number): Promise<string> {
    for (;;) {
      try {
        const endsAt = lifetimeMs === undefined ? undefined : new Date(Date.now() + lifetimeMs).toISOString();
        const reply = await this.client.call('POST', '/v1/allocations', {
          body: { nodeId, tenantId: TENANT, kind: 'job', ...(endsAt ? { endsAt } : {}) },
          once: true,
        });
        if (reply.status === 201) return reply.body.id as string;
        throw new Error(`POST /v1/allocations: ${reply.status} ${JSON.stringify(reply.body)}`);
      } catch (error) {
        if (!(error instanceof CallLost)) throw error;
        await sleep(200);
        const live = await this.client.expect([200], 'GET', `/v1/allocations?nodeId=${nodeId}&live=true`);
        const stray = (live.body.items as { id: string }[]).find((a) => !known.includes(a.id));
        if (stray) return stray.id;
      }
    }
  }

  /** Retires each node's agent (goodbye), then previews and executes its decommission. */
  async decommissions(nodeIds: string[]): Promise<void> {
    await Promise.all(
      nodeIds.map((nodeId) =>
        this.guard(`decommission of ${nodeId}`, async () => {
          await this.simulatorOf(nodeId).stop(nodeId);
          const key = randomUUID();
          for (;;) {
            const preview = (
              await this.client.expect([200], 'POST', `/v1/nodes/${nodeId}/decommission/preview`)
            ).body;
            if (preview.eligible === false) {
              await sleep(500);
              continue;
            }
            const reply = await this.client.call('POST', `/v1/nodes/${nodeId}/decommission`, {
              idempotencyKey: key,
              body: {
                confirm: preview.hostname,
                nodeGeneration: preview.nodeGeneration,
                dependencyDigest: preview.dependencyDigest,
                operator: 'soak',
                reason: 'soak',
              },
            });
            // The node changed between preview and execute (its goodbye landing late): preview again.
            if (reply.status === 409) {
              await sleep(300);
              continue;
            }
            if (reply.status !== 200 && reply.status !== 202)
              throw new Error(`decommission: ${reply.status} ${JSON.stringify(reply.body)}`);
            return this.waitFor('decommission', (reply.body.operation ?? reply.body).id, nodeId);
          }
        }),
      ),
    );
  }

  /** Purges each node; its simulated agent verifies and acknowledges the signed command. */
  async purges(nodeIds: string[]): Promise<void> {
    await Promise.all(
      nodeIds.map((nodeId) =>
        this.guard(`purge of ${nodeId}`, async () => {
          const reply = await this.client.expect([200, 202], 'POST', `/v1/nodes/${nodeId}/purge`, {
            body: { confirm: true, reason: 'soak' },
            idempotencyKey: randomUUID(),
          });
          return this.waitFor('purge', reply.body.operation.id, nodeId);
        }),
      ),
    );
  }

  /** Each node's agent reports a fault; the remediation's first rung clears it. */
  async remediations(nodeIds: string[]): Promise<void> {
    await Promise.all(
      nodeIds.map((nodeId) =>
        this.guard(`remediation of ${nodeId}`, async () => {
          // The agent's API may be the one killed or Postgres restarting: a real agent reports again
          // until the report is taken (reporting a condition twice is the same report).
          for (let attempt = 1; ; attempt++) {
            try {
              await this.simulatorOf(nodeId).reportCondition(nodeId, CONDITION, true, 'soak');
              break;
            } catch (error) {
              if (attempt >= 60) throw error;
              await sleep(1_000);
            }
          }
          const op = await this.eventuallyOperation(nodeId, 'remediation');
          return this.waitFor('remediation', op, nodeId);
        }),
      ),
    );
  }

  /** A drain of an empty node, start to end: the whole path works again (recovery probes). */
  async probe(nodeId: string): Promise<void> {
    const op = (
      await this.client.expect([200, 202], 'POST', `/v1/nodes/${nodeId}/drain`, {
        body: { reason: 'probe' },
        idempotencyKey: randomUUID(),
      })
    ).body.operation;
    const ended = await this.waitFor('drain', op.id, nodeId, false);
    if (ended.status !== 'succeeded') throw new Error(`probe drain ended ${ended.status}`);
    await this.client.expect([200], 'POST', `/v1/nodes/${nodeId}/uncordon`, { body: {} });
  }

  private async eventuallyOperation(nodeId: string, kind: string): Promise<string> {
    for (;;) {
      const list = await this.client.expect([200], 'GET', `/v1/operations?nodeId=${nodeId}&kind=${kind}`);
      const found = (list.body.items as { id: string }[])[0];
      if (found) return found.id;
      await sleep(250);
    }
  }

  /** Reads the operation until it is terminal (or the wait runs out) and records how it ended. */
  private async waitFor(kind: Started['kind'], id: string, nodeId: string, record = true): Promise<Started> {
    const started = Date.now();
    let status = 'unknown';
    while (Date.now() - started < OPERATION_WAIT_MS) {
      const list = await this.client.expect([200], 'GET', `/v1/operations?nodeId=${nodeId}&kind=${kind}`);
      status =
        (list.body.items as { id: string; status: string }[]).find((o) => o.id === id)?.status ?? 'missing';
      const underWay = this.underWay.get(`${kind} of ${nodeId}`);
      if (underWay) underWay.operation = { id, status };
      if (TERMINAL.has(status)) break;
      await sleep(250);
    }
    const ended: Started = { kind, id, nodeId, status, ms: Date.now() - started };
    if (record) {
      this.started.push(ended);
      if (TERMINAL.has(status)) this.recorder.finished();
    }
    return ended;
  }

  /** What is under way, oldest first: "drain of node_… (op_… running, 34 s)". */
  pending(): string[] {
    return [...this.underWay].map(([what, entry]) => describeUnderWay(what, entry));
  }

  /** `pending()`, each operation with the progress its workflow reports now (what it waits for). */
  async pendingInDetail(): Promise<string[]> {
    return Promise.all(
      [...this.underWay].map(async ([what, entry]) => {
        const line = describeUnderWay(what, entry);
        if (!entry.operation) return line;
        try {
          const read = await this.client.call('GET', `/v1/operations/${entry.operation.id}`, { once: true });
          return `${line}: progress ${JSON.stringify(read.body?.progress ?? null)}`;
        } catch (error) {
          return `${line}: progress not read (${(error as Error).message})`;
        }
      }),
    );
  }

  private async guard(what: string, fn: () => Promise<unknown>): Promise<void> {
    this.underWay.set(what, { since: Date.now() });
    try {
      await fn();
    } catch (error) {
      this.failures.push(`${what}: ${(error as Error).message}`);
    } finally {
      this.underWay.delete(what);
    }
  }

  private simulatorOf(nodeId: string): Simulator {
    const found = this.simulators.find((s) => s.agents.some((a) => a.nodeId === nodeId));
    if (!found) throw new Error(`no simulated agent for ${nodeId}`);
    return found;
  }
}
