import type { Answer, ApiClient, Schemas } from '@drydock/client';
import type { EndingAction } from '../domain/observed';
import type { ObservedAllocation } from '../domain/scheduler';
import type { SchedulerReport } from '../domain/scheduler-view';

/** How long the bridge's long-poll of the event feed waits for an event. */
export const FEED_WAIT_SECONDS = 30;

type Node = Schemas['Node'];
type Operation = Schemas['Operation'];
type Event = Answer<'get', '/v1/events'>['items'][number];

/**
 * What a bridge reads and writes in Drydock, through the API client only. Every write is
 * idempotent by what it names (the work's source and id, the allocation, the node's view), so a
 * pass repeated after a crash or a lost answer changes nothing twice.
 */
export class DrydockSide {
  constructor(
    private readonly api: ApiClient,
    readonly source: string,
  ) {}

  /** Every node that is not deleted. */
  nodes(): Promise<Node[]> {
    return every((cursor) => this.api.GET('/v1/nodes', { params: { query: { limit: 200, cursor } } }));
  }

  /** The live allocations this bridge's scheduler placed. */
  async allocations(): Promise<ObservedAllocation[]> {
    const items = await every((cursor) =>
      this.api.GET('/v1/allocations', {
        params: { query: { source: this.source, live: 'true', limit: 500, cursor } },
      }),
    );
    return items.map((a) => ({
      id: a.id,
      nodeId: a.nodeId,
      externalId: a.externalId!,
      endRequestedAt: a.endRequestedAt,
      ending: a.ending,
    }));
  }

  /** The drains not yet ended (pending or running), by node. */
  async drains(): Promise<Map<string, Operation>> {
    const open = await Promise.all(
      (['pending', 'running'] as const).map((status) =>
        every((cursor) =>
          this.api.GET('/v1/operations', {
            params: { query: { kind: 'drain', status, limit: 100, cursor } },
          }),
        ),
      ),
    );
    return new Map(
      open
        .flat()
        .filter((op) => op.nodeId !== null)
        .map((op) => [op.nodeId!, op]),
    );
  }

  observe(work: { nodeId: string; tenantId: string; externalId: string; endsAt: Date | null }) {
    return this.api.POST('/v1/allocations', {
      body: {
        nodeId: work.nodeId,
        tenantId: work.tenantId,
        kind: 'job',
        source: this.source,
        externalId: work.externalId,
        ...(work.endsAt ? { endsAt: work.endsAt.toISOString() } : {}),
      },
    });
  }

  release(allocationId: string) {
    return this.api.POST('/v1/allocations/{id}/release', { params: { path: { id: allocationId } } });
  }

  /** Releases the live allocations of the scheduler's work `externalId`; resolves to how many. */
  async releaseWork(externalId: string): Promise<number> {
    const { items } = await this.api.GET('/v1/allocations', {
      params: { query: { source: this.source, externalId, live: 'true' } },
    });
    for (const allocation of items) await this.release(allocation.id);
    return items.length;
  }

  ending(allocationId: string, action: EndingAction, answer: string) {
    return this.api.POST('/v1/allocations/{id}/ending', {
      params: { path: { id: allocationId } },
      body: { action, answer: answer.slice(0, 500) },
    });
  }

  report(nodeId: string, report: SchedulerReport) {
    return this.api.PUT('/v1/nodes/{id}/schedulers/{source}', {
      params: { path: { id: nodeId, source: this.source } },
      body: report,
    });
  }

  /** Where the event feed stands now: the bridge follows it from there. */
  async feedCursor(): Promise<string> {
    return (await this.api.GET('/v1/events', { params: { query: { limit: 0 } } })).nextCursor;
  }

  /** The events after `cursor` of the `types` (prefixes), waiting up to FEED_WAIT_SECONDS for one. */
  events(
    cursor: string,
    types: readonly string[],
    signal: AbortSignal,
  ): Promise<{ items: Event[]; nextCursor: string }> {
    return this.api.GET('/v1/events', {
      params: { query: { after: cursor, type: types.join(','), wait: FEED_WAIT_SECONDS, limit: 200 } },
      timeoutMs: (FEED_WAIT_SECONDS + 15) * 1000,
      signal,
    });
  }
}

/** Every page of a cursor-paged listing. */
async function every<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
) {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor ?? undefined;
  } while (cursor);
  return items;
}
