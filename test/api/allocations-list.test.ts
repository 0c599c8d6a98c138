import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { allocations } from '../../db/schema';
import { seedPoolNode } from '../support/builders';
import { rows, useCli } from '../support/cli';
import { allocate, call, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);

interface Item {
  id: string;
  nodeId: string;
  tenantId: string;
  live: boolean;
  releasedAt: string | null;
  releasedBy: string | null;
}

const list = (query: string, token?: string) =>
  call<{ items: Item[]; nextCursor: string | null; error: { code: string } }>(
    h,
    'GET',
    `/v1/allocations?${query}`,
    { token },
  );
const ids = (items: Item[]) => items.map((a) => a.id);

/** A node of a fresh tenant with one live, one released and one past-its-end allocation. */
async function nodeWithThree(tenant: string) {
  const nodeId = await seedPoolNode(h, `pool-${tenant}`, tenant);
  const live = await allocate(h, nodeId, tenant, new Date(Date.now() + 3_600_000));
  const released = await allocate(h, nodeId, tenant);
  await call(h, 'POST', `/v1/allocations/${released}/release`);
  const ended = await allocate(h, nodeId, tenant, new Date(Date.now() + 3_600_000));
  await h.db
    .update(allocations)
    .set({ endsAt: new Date(Date.now() - 1_000) })
    .where(eq(allocations.id, ended));
  return { nodeId, live, released, ended };
}

describe('GET /v1/allocations', () => {
  it('filters by node and live (true: what blocks a drain; false: ended; absent: all), oldest first', async () => {
    const a = await nodeWithThree('alist-a');
    const other = await nodeWithThree('alist-b');

    const all = await list(`nodeId=${a.nodeId}`);
    expect(all.status).toBe(200);
    expect(ids(all.body.items)).toEqual([a.live, a.released, a.ended]);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items[0]).toEqual({
      id: a.live,
      nodeId: a.nodeId,
      tenantId: 'alist-a',
      kind: 'job',
      createdAt: expect.any(String),
      endsAt: expect.any(String),
      releasedAt: null,
      releasedBy: null,
      source: null,
      externalId: null,
      endRequestedAt: null,
      ending: null,
      live: true,
    });
    expect(all.body.items[1]).toMatchObject({ live: false, releasedBy: 'key:bootstrap-operator' });
    expect(all.body.items[1]!.releasedAt).toEqual(expect.any(String));
    expect(all.body.items[2]).toMatchObject({ live: false, releasedAt: null });

    expect(ids((await list(`nodeId=${a.nodeId}&live=true`)).body.items)).toEqual([a.live]);
    expect(ids((await list(`nodeId=${a.nodeId}&live=false`)).body.items)).toEqual([a.released, a.ended]);
    expect(ids((await list(`tenantId=alist-b&live=true`)).body.items)).toEqual([other.live]);

    const one = await call(h, 'GET', `/v1/allocations/${a.released}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all.body.items[1]);
  });

  it('pages by createdAt then id with nothing lost or repeated', async () => {
    const nodeId = await seedPoolNode(h, 'pool-alist-page', 'alist-page');
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push(await allocate(h, nodeId, 'alist-page'));
    // All with one createdAt: the id breaks the tie, so a cursor still lands between two of them.
    await h.db
      .update(allocations)
      .set({ createdAt: new Date('2026-01-01T00:00:00.123Z') })
      .where(eq(allocations.nodeId, nodeId));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const reply = await list(`nodeId=${nodeId}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...ids(reply.body.items));
      cursor = reply.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].sort());
  });

  it("shows a tenant key only its own tenant's allocations; another's node or id is not there", async () => {
    const mine = await nodeWithThree('alist-mine');
    const theirs = await nodeWithThree('alist-theirs');
    const key = (await tenantKey(h, 'alist-mine', ['compute:nodes:read'])).secret;

    const own = await list(`nodeId=${mine.nodeId}`, key);
    expect(ids(own.body.items)).toEqual([mine.live, mine.released, mine.ended]);
    const everything = await list('limit=50', key);
    expect(everything.body.items.every((a) => a.tenantId === 'alist-mine')).toBe(true);
    // Another tenant's node, or its tenant id, answers like a node with no allocations at all.
    for (const query of [`nodeId=${theirs.nodeId}`, 'tenantId=alist-theirs', `nodeId=${newId('node')}`]) {
      const reply = await list(query, key);
      expect(reply.status, query).toBe(200);
      expect(reply.body, query).toEqual({ items: [], nextCursor: null });
    }
    const theirsOne = await call(h, 'GET', `/v1/allocations/${theirs.live}`, { token: key });
    const missing = await call(h, 'GET', `/v1/allocations/${newId('alloc')}`, { token: key });
    expect(theirsOne.status).toBe(404);
    expect(theirsOne.body.error.code).toBe('NOT_FOUND');
    expect(missing.status).toBe(404);
    expect(theirsOne.body.error.message.replace(theirs.live, 'X')).toBe(
      missing.body.error.message.replace(/alloc_\w+/, 'X'),
    );

    const writer = (await tenantKey(h, 'alist-mine', ['compute:allocations:write'], 'alist-writer')).secret;
    expect((await list('', writer)).body.error.code).toBe('FORBIDDEN');
  });

  it('refuses a bad cursor, limit or nodeId with 400 INVALID_INPUT', async () => {
    const forged = Buffer.from('node_01k5w8v3x9q2m4n6p8r0s2t4v6').toString('base64url');
    for (const query of [
      `cursor=${forged}`,
      'cursor=%2F%2F',
      'limit=0',
      'limit=501',
      'limit=ten',
      'nodeId=gpu-01',
      'live=yes',
    ]) {
      const reply = await list(query);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code, query).toBe('INVALID_INPUT');
    }
  });
});

describe('drydock allocations list', () => {
  it('prints a table, the API page with --json, pages with --all, and filters by --node --live', async () => {
    const a = await nodeWithThree('alist-cli');
    const [table, live, paged, firstPage] = await Promise.all([
      cli.drydock(['allocations', 'list', '--node', a.nodeId]),
      cli.drydock(['allocations', 'list', '--node', a.nodeId, '--live', '--json']),
      cli.drydock(['allocations', 'list', '--node', a.nodeId, '--limit', '1', '--all', '--json']),
      cli.drydock(['allocations', 'list', '--node', a.nodeId, '--limit', '1']),
    ]);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout.split('\n')[0]!.split(/\s+/)).toEqual([
      'ID',
      'NODE',
      'TENANT',
      'KIND',
      'ENDS',
      'STATE',
    ]);
    const cells = rows(table.stdout).map((line) => line.split(/\s+/));
    expect(cells.map((c) => [c[0], c[1], c[2], c[3], c[5]])).toEqual([
      [a.live, a.nodeId, 'alist-cli', 'job', 'live'],
      [a.released, a.nodeId, 'alist-cli', 'job', 'released'],
      [a.ended, a.nodeId, 'alist-cli', 'job', 'ended'],
    ]);
    expect(cells[1]![4]).toBe('-');

    expect(live.code).toBe(0);
    expect(JSON.parse(live.stdout)).toEqual((await list(`nodeId=${a.nodeId}&live=true`)).body);
    expect(JSON.parse(paged.stdout)).toEqual({
      items: (await list(`nodeId=${a.nodeId}`)).body.items,
      nextCursor: null,
    });
    expect(rows(firstPage.stdout)).toHaveLength(1);
    expect(firstPage.stderr).toContain('add --all');

    const none = await cli.drydock(['allocations', 'list', '--node', newId('node'), '--live']);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'no allocations match\n' });
    await cli.refuses([[['allocations', 'list', '--node', 'gpu-01'], '--node must be a node id']]);
  });
});
