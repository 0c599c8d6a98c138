import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { appendEvent } from '../../db/events';
import { seedPoolNode } from '../support/builders';
import { call, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness({ worker: false });

interface FeedEvent {
  id: string;
  nodeId: string | null;
  type: string;
}
type Feed = { items: FeedEvent[]; nextCursor: string };

const feed = async (query: string, token?: string) => {
  const reply = await call<Feed>(h, 'GET', `/v1/events?${query}`, { token });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
};
/** Where a follower starting now begins: past every event so far. */
const now = async () => (await feed('limit=0')).nextCursor;
const cordonTwice = async (nodeId: string) => {
  await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`);
  await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`);
};
const ids = (items: FeedEvent[]) => items.map((e) => Number(e.id));

describe('GET /v1/events', () => {
  it('pages the fleet oldest first, each event once, and hands the cursor back when nothing is new', async () => {
    const start = await now();
    const [a, b] = [await seedPoolNode(h, 'pool-a'), await seedPoolNode(h, 'pool-b')];
    for (let i = 0; i < 4; i++) await cordonTwice(i % 2 ? a : b);

    const seen: FeedEvent[] = [];
    let cursor = start;
    for (let pages = 0; pages < 10; pages++) {
      const page = await feed(`after=${cursor}&limit=3`);
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items);
      if (page.items.length === 0) {
        expect(page.nextCursor).toBe(cursor);
        break;
      }
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(8);
    expect(ids(seen)).toEqual([...ids(seen)].sort((x, y) => x - y));
    expect(new Set(ids(seen)).size).toBe(8);
    expect(seen.map((e) => e.nodeId)).toEqual([b, b, a, a, b, b, a, a]);
    expect(cursor).toBe(seen[7]!.id);
    // No after: from the first event.
    expect(ids((await feed('limit=200')).items)).toEqual(expect.arrayContaining(ids(seen)));
  });

  it('limit=0 answers at once, with no events, the cursor past every event so far', async () => {
    const nodeId = await seedPoolNode(h, 'pool-now');
    await cordonTwice(nodeId);
    const everything = await feed('limit=200');
    const started = Date.now();
    const position = await feed('limit=0&wait=30');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(position.items).toEqual([]);
    expect(Number(position.nextCursor)).toBeGreaterThanOrEqual(Number(everything.items.at(-1)!.id));
    // From there a follower sees what comes next and nothing before it.
    expect((await feed(`after=${position.nextCursor}`)).items).toEqual([]);
    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`);
    expect((await feed(`after=${position.nextCursor}`)).items.map((e) => e.type)).toEqual(['node.cordoned']);
  });

  it('filters by a type prefix or an exact type, or any of several', async () => {
    const start = await now();
    await cordonTwice(await seedPoolNode(h, 'pool-t'));
    expect((await feed(`after=${start}&type=node.cordon`)).items.map((e) => e.type)).toEqual([
      'node.cordoned',
    ]);
    expect((await feed(`after=${start}&type=node.uncordoned`)).items.map((e) => e.type)).toEqual([
      'node.uncordoned',
    ]);
    // Several, separated by commas: an event of any of them, each once.
    expect(
      (await feed(`after=${start}&type=node.uncordoned,security.,node.cordon`)).items.map((e) => e.type),
    ).toEqual(['node.cordoned', 'node.uncordoned']);
    const none = await feed(`after=${start}&type=security.`);
    expect(none.items).toEqual([]);
    // Every event up to the horizon was looked at: the cursor moves past the ones filtered out.
    expect(Number(none.nextCursor)).toBeGreaterThan(Number(start));
  });

  it("filters by node: only that node's events", async () => {
    const start = await now();
    const [a, b] = [await seedPoolNode(h, 'pool-na'), await seedPoolNode(h, 'pool-nb')];
    await cordonTwice(a);
    await cordonTwice(b);
    const onlyA = await feed(`after=${start}&nodeId=${a}`);
    expect(onlyA.items.map((e) => [e.nodeId, e.type])).toEqual([
      [a, 'node.cordoned'],
      [a, 'node.uncordoned'],
    ]);
  });

  it('shows a tenant key only the events of nodes it can see', async () => {
    const start = await now();
    const own = await seedPoolNode(h, 'pool-own', 'initech');
    const foreign = await seedPoolNode(h, 'pool-foreign', 'hooli');
    await cordonTwice(own);
    await cordonTwice(foreign);
    const key = await tenantKey(h, 'initech', ['compute:nodes:read']);
    const mine = await feed(`after=${start}`, key.secret);
    expect(mine.items.map((e) => e.nodeId)).toEqual([own, own]);
    const all = await feed(`after=${start}`);
    expect(all.items.map((e) => e.nodeId)).toEqual([own, own, foreign, foreign]);
    const none = await tenantKey(h, 'initech', ['compute:tokens:read'], 'no-read');
    expect((await call(h, 'GET', '/v1/events', { token: none.secret })).status).toBe(403);
  });

  it('a long-poll answers as soon as an event commits, well before its wait ends', async () => {
    const node = await seedPoolNode(h, 'pool-w');
    const start = await now();
    const began = Date.now();
    const polled = feed(`after=${start}&wait=20`);
    await eventually(async () => h.deps.feedWakeups.waiting('') > 0);
    await call(h, 'POST', `/v1/nodes/${node}/cordon`);
    const page = await polled;
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(page.items.map((e) => [e.nodeId, e.type])).toEqual([[node, 'node.cordoned']]);
    expect(h.deps.feedWakeups.waiting('')).toBe(0);
  });

  it('a long-poll with nothing new ends empty after its wait, with the same cursor', async () => {
    const start = await now();
    const began = Date.now();
    const page = await feed(`after=${start}&wait=1`);
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    expect(page).toEqual({ items: [], nextCursor: start });
  });

  it('a client that goes away mid-wait leaves no listener behind', async () => {
    const aborted = new AbortController();
    const polled = h.app.request(`/v1/events?after=${await now()}&wait=30`, {
      headers: { authorization: `Bearer ${h.operatorKey}` },
      signal: aborted.signal,
    });
    await eventually(async () => h.deps.feedWakeups.waiting('') > 0);
    aborted.abort();
    await Promise.resolve(polled).catch(() => undefined);
    await eventually(async () => h.deps.feedWakeups.waiting('') === 0);
  });

  it('never skips an event whose transaction commits after a later id', async () => {
    // Two nodes: events of one node already take turns on its history row.
    const [node, other] = [await seedPoolNode(h, 'pool-o'), await seedPoolNode(h, 'pool-o')];
    const start = await now();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let appended!: (backend: number) => void;
    const first = new Promise<number>((resolve) => (appended = resolve));
    // The first transaction takes the smaller id and stays open...
    const slow = h.db.transaction(async (tx) => {
      await appendEvent(tx, { type: 'node.cordoned', nodeId: node, actor: 'test', reason: 'slow' });
      const [backend] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
      appended(backend!.pid);
      await held;
    });
    const slowBackend = await first;
    // ...while a second takes the next id and commits first.
    await h.db.transaction((tx) =>
      appendEvent(tx, { type: 'node.cordoned', nodeId: other, actor: 'test', reason: 'fast' }),
    );
    let answered: Feed | null = null;
    const read = feed(`after=${start}`).then((page) => (answered = page));
    // The feed does not move past the open transaction's id: its read waits behind that transaction
    // (for the lock every appender holds until it commits), answering nothing meanwhile.
    await eventually(async () => {
      expect(answered).toBeNull();
      const blocked = await h.db.execute(
        sql`select 1 from pg_stat_activity where ${slowBackend} = any(pg_blocking_pids(pid))`,
      );
      return blocked.length > 0;
    });
    release();
    await slow;
    const page = await read;
    expect(page.items.map((e) => (e as FeedEvent & { reason: string }).reason)).toEqual(['slow', 'fast']);
    expect(page.nextCursor).toBe(page.items[1]!.id);
  });

  it('refuses a bad cursor, wait, type or node id with 400 INVALID_INPUT', async () => {
    for (const query of [
      'after=abc',
      'after=-1',
      'after=1e3',
      'after=1234567890123456',
      'wait=31',
      'wait=-1',
      'wait=1.5',
      'limit=-1',
      'limit=201',
      'type=Node.',
      'type=node_drain',
      'type=',
      'type=node%25',
      'type=node.,',
      'type=,node.',
      `type=${Array.from({ length: 11 }, (_, i) => `t${i}.`).join(',')}`,
      'nodeId=node_1',
      'nodeId=pool-a',
    ]) {
      const reply = await call(h, 'GET', `/v1/events?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code, query).toBe('INVALID_INPUT');
    }
  });
});
