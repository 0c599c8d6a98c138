import { describe, expect, it } from 'vitest';
import { setNode } from '../support/builders';
import { call, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

interface Page {
  items: { id: string; hostname: string }[];
  nextCursor: string | null;
  prevCursor: string | null;
}

const list = async (query: string): Promise<Page> => {
  const reply = await call(h, 'GET', `/v1/nodes?${query}`);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as Page;
};

/** Every page of the query, forward from the first by nextCursor. */
async function forward(query: string): Promise<Page[]> {
  const pages = [await list(query)];
  while (pages.at(-1)!.nextCursor) pages.push(await list(`${query}&cursor=${pages.at(-1)!.nextCursor}`));
  return pages;
}

const names = (pages: Page[]) => pages.flatMap((p) => p.items.map((n) => n.hostname));

describe('GET /v1/nodes?sort=', () => {
  it('sorts by a field, names as people read them, and pages forward and back through the same pages', async () => {
    await seedPool(h, { id: 'pool-sort', tenantId: 'acme' });
    for (const hostname of ['gpu-10', 'gpu-2', 'gpu-1', 'gpu-b', 'gpu-9', 'gpu-21', 'gpu-3']) {
      await seedNode(h, { poolId: 'pool-sort', hostname });
    }
    const natural = ['gpu-1', 'gpu-2', 'gpu-3', 'gpu-9', 'gpu-10', 'gpu-21', 'gpu-b'];
    const query = 'poolId=pool-sort&sort=hostname&limit=3';
    const pages = await forward(query);
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
    expect(names(pages)).toEqual(natural);
    expect(pages[0]!.prevCursor).toBeNull();

    // Back from the last page by prevCursor: the same pages, and the first says there is none before.
    const back = [pages[2]!];
    while (back[0]!.prevCursor) back.unshift(await list(`${query}&before=${back[0]!.prevCursor}`));
    expect(back.map((p) => p.items.map((n) => n.hostname))).toEqual(
      pages.map((p) => p.items.map((n) => n.hostname)),
    );
    expect(back[0]!.prevCursor).toBeNull();
    // And forward again from a page read backward.
    expect((await list(`${query}&cursor=${back[0]!.nextCursor}`)).items).toEqual(pages[1]!.items);

    expect(names(await forward('poolId=pool-sort&sort=-hostname&limit=2'))).toEqual([...natural].reverse());
  });

  it('sorts by a label: its values as people read them, the nodes without it first', async () => {
    await seedPool(h, { id: 'pool-label', tenantId: 'acme' });
    await seedNode(h, { poolId: 'pool-label', hostname: 'a', labels: { 'gpu.model': 'H100' } });
    await seedNode(h, { poolId: 'pool-label', hostname: 'b', labels: { 'gpu.model': 'A100' } });
    await seedNode(h, { poolId: 'pool-label', hostname: 'c' });
    await seedNode(h, { poolId: 'pool-label', hostname: 'd', labels: { 'gpu.model': 'H20' } });
    expect(names(await forward('poolId=pool-label&sort=label:gpu.model&limit=1'))).toEqual([
      'c',
      'b',
      'd',
      'a',
    ]);
    expect(names(await forward('poolId=pool-label&sort=-label:gpu.model&limit=3'))).toEqual([
      'a',
      'd',
      'b',
      'c',
    ]);
  });

  it('ties keep their order by id from page to page; a node never seen sorts before every time', async () => {
    await seedPool(h, { id: 'pool-ties', tenantId: 'acme' });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await seedNode(h, { poolId: 'pool-ties', hostname: `t-${i}` }));
    for (const id of ids.slice(0, 3)) await setNode(h, id, { cordoned: true });
    await setNode(h, ids[4]!, { lastSeenAt: new Date('2026-12-01T00:00:00.123456Z') });
    await setNode(h, ids[5]!, { lastSeenAt: new Date('2026-12-02T00:00:00Z') });

    const byCordon = await forward('poolId=pool-ties&sort=cordoned&limit=2');
    const expected = [...ids.slice(3), ...ids.slice(0, 3)].toSorted(
      (a, b) => Number(ids.indexOf(a) < 3) - Number(ids.indexOf(b) < 3) || (a < b ? -1 : 1),
    );
    expect(byCordon.flatMap((p) => p.items.map((n) => n.id))).toEqual(expected);

    const seen = names(await forward('poolId=pool-ties&sort=-lastSeenAt&limit=2'));
    expect(seen.slice(0, 2)).toEqual(['t-5', 't-4']);
    expect(seen.toSorted()).toEqual(ids.map((_, i) => `t-${i}`));
  });

  it('the default order is by id, its cursors as before, now with the page before', async () => {
    await seedPool(h, { id: 'pool-ids', tenantId: 'acme' });
    for (let i = 0; i < 5; i++) await seedNode(h, { poolId: 'pool-ids' });
    const pages = await forward('poolId=pool-ids&limit=2');
    const ids = pages.flatMap((p) => p.items.map((n) => n.id));
    expect(ids).toEqual(ids.toSorted());
    expect(Buffer.from(pages[0]!.nextCursor!, 'base64url').toString()).toBe(ids[1]);
    expect((await list(`poolId=pool-ids&limit=2&before=${pages[2]!.prevCursor}`)).items).toEqual(
      pages[1]!.items,
    );
  });

  it('id= reads just those nodes, in one call; a deleted one only with includeDeleted', async () => {
    await seedPool(h, { id: 'pool-ids-few', tenantId: 'acme' });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await seedNode(h, { poolId: 'pool-ids-few', hostname: `few-${i}` }));
    await setNode(h, ids[3]!, { deletedAt: new Date() });
    const asked = [ids[2]!, ids[0]!, ids[3]!].join(',');
    expect(names([await list(`id=${asked}&sort=hostname`)])).toEqual(['few-0', 'few-2']);
    expect(names([await list(`id=${asked}&sort=hostname&includeDeleted=true`)])).toEqual([
      'few-0',
      'few-2',
      'few-3',
    ]);
    for (const query of [`id=${ids[0]},`, 'id=few-0', `id=${Array(201).fill(ids[0]).join(',')}`]) {
      const reply = await call(h, 'GET', `/v1/nodes?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.message, query).toMatch(/node ids/);
    }
  });

  it('refuses an unknown order, a cursor of another order, a forged cursor, and cursor with before', async () => {
    await seedPool(h, { id: 'pool-bad', tenantId: 'acme' });
    for (let i = 0; i < 3; i++) await seedNode(h, { poolId: 'pool-bad' });
    const [first] = await forward('poolId=pool-bad&sort=hostname&limit=1');
    const forged = (held: unknown[]) => Buffer.from(JSON.stringify(held)).toString('base64url');
    const refusals: [string, RegExp][] = [
      ['sort=gpu', /sort/],
      ['sort=label:', /sort/],
      ['sort=hostname,-liveness', /sort/],
      [`sort=-hostname&cursor=${first!.nextCursor}`, /order -hostname/],
      [`cursor=${first!.nextCursor}`, /cursor/],
      [`sort=hostname&cursor=${first!.nextCursor}&before=${first!.nextCursor}`, /not both/],
      [`sort=lastSeenAt&cursor=${forged(['lastSeenAt', 'soon', first!.items[0]!.id])}`, /date or time/],
      [`sort=cordoned&cursor=${forged(['cordoned', 'maybe', first!.items[0]!.id])}`, /malformed/],
      [`sort=hostname&cursor=${forged(['hostname', 'a', 'node_x'])}`, /cursor/],
    ];
    for (const [query, message] of refusals) {
      const reply = await call(h, 'GET', `/v1/nodes?poolId=pool-bad&${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code, query).toBe('INVALID_INPUT');
      expect(reply.body.error.message, query).toMatch(message);
    }
  });
});
