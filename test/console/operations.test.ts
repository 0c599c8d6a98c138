import { describe, expect, it } from 'vitest';
import { operations } from '../../db/schema';
import { newId } from '../../domain/ids';
import { allocate, call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { Browser, useConsole } from './console-client';

const h = useHarness();
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const server = useConsole(h, { temporalUiUrl: TEMPORAL_UI });

async function signedIn(key: string) {
  const browser = new Browser(server.base);
  expect((await browser.signIn(key)).status).toBe(303);
  return browser;
}

/** The operation ids in a page's table, in order (each linked to its page). */
const idsOf = (html: string) =>
  [
    ...html.matchAll(/<td><a href="\/console\/operations\/(op_[0-9a-z]{26})"><code>\1<\/code><\/a><\/td>/g),
  ].map((m) => m[1]);

describe('operations page', () => {
  it('lists running and finished operations, each linked to its node or pool and its workflow; filters pass through', async () => {
    await seedPool(h, { id: 'pool-ops-list', tenantId: 'acme' });
    const held = await seedNode(h, { poolId: 'pool-ops-list', tenantId: 'acme', hostname: 'ops-held' });
    const free = await seedNode(h, { poolId: 'pool-ops-list', tenantId: 'acme', hostname: 'ops-free' });
    await allocate(h, held, 'acme');
    const running = (await call(h, 'POST', `/v1/nodes/${held}/drain`, { body: { reason: 'held' } })).body
      .operation;
    const finished = (await call(h, 'POST', `/v1/nodes/${free}/drain`, { body: { reason: 'free' } })).body
      .operation;
    await eventually(async () => {
      const op = (await call(h, 'GET', `/v1/operations/${finished.id}`)).body;
      return op.status === 'succeeded' ? op : undefined;
    });
    const browser = await signedIn(h.operatorKey);

    const all = await browser.get('/console/operations');
    expect(all.status).toBe(200);
    expect(idsOf(all.html)).toEqual(expect.arrayContaining([running.id, finished.id]));
    expect(all.html).toContain(`<a href="/console/nodes/${held}">${held}</a>`);
    expect(all.html).toContain(
      `href="${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent(`drain/${held}`)}"`,
    );
    // The list updates live.
    expect(all.html).toContain('id="live-operations" data-live=""');

    const runningOnly = await browser.get('/console/operations?kind=drain&status=running');
    const api = (await call(h, 'GET', '/v1/operations?kind=drain&status=running')).body.items.map(
      (op: { id: string }) => op.id,
    );
    expect(idsOf(runningOnly.html)).toEqual(api);
    expect(idsOf(runningOnly.html)).toContain(running.id);
    expect(idsOf(runningOnly.html)).not.toContain(finished.id);
    // The filters stay chosen.
    expect(runningOnly.html).toContain('<option value="drain" selected="">drain</option>');
    expect(runningOnly.html).toContain('<option value="running" selected="">running</option>');
    const succeeded = await browser.get('/console/operations?kind=drain&status=succeeded');
    expect(idsOf(succeeded.html)).toContain(finished.id);
    expect(idsOf(succeeded.html)).not.toContain(running.id);

    // A pool drain links to its pool's page.
    const poolDrain = (
      await call(h, 'POST', '/v1/pools/pool-ops-list/drain', {
        body: { selector: 'none=here', reason: 'empty' },
      })
    ).body.operation;
    const pools = await browser.get('/console/operations?kind=pool-drain');
    expect(idsOf(pools.html)).toContain(poolDrain.id);
    expect(pools.html).toContain('<a href="/console/pools/pool-ops-list">pool pool-ops-list</a>');
    await call(h, 'DELETE', `/v1/operations/${running.id}`, { body: {} });
  });

  it('pages by the API cursor: 50, then the rest, none twice', async () => {
    await seedPool(h, { id: 'pool-ops-page' });
    const nodeId = await seedNode(h, { poolId: 'pool-ops-page' });
    const ids = Array.from({ length: 57 }, () => newId('op'));
    await h.db.insert(operations).values(
      ids.map((id) => ({
        id,
        kind: 'purge' as const,
        nodeId,
        poolId: 'pool-ops-page',
        status: 'succeeded' as const,
        workflowId: `purge/${nodeId}/${id}`,
        actor: 'key:bootstrap-operator',
        reason: 'history',
        completedAt: new Date(),
      })),
    );
    const browser = await signedIn(h.operatorKey);
    const first = await browser.get('/console/operations?kind=purge&status=succeeded');
    // Newest first: by id, descending (ids minted in the same millisecond are not in mint order).
    const newestFirst = [...ids].sort().reverse();
    expect(idsOf(first.html)).toEqual(newestFirst.slice(0, 50));
    const next = /<a href="(\/console\/operations\?[^"]+)">Older operations<\/a>/.exec(first.html)?.[1];
    expect(next).toContain('kind=purge');
    expect(next).toContain('status=succeeded');
    const second = await browser.get(next!.replaceAll('&amp;', '&'));
    expect(idsOf(second.html)).toEqual(newestFirst.slice(50));
    expect(second.html).not.toContain('Older operations');
  });

  it("bad filter values and cursors show the API's refusal in the page: 400, never a 500", async () => {
    const browser = await signedIn(h.operatorKey);
    for (const query of ['kind=nope', 'status=finished', 'cursor=bm90LWFuLWlk', 'kind=%00']) {
      const page = await browser.get(`/console/operations?${query}`);
      expect(page.status, query).toBe(400);
      expect(page.html).toMatch(/<p class="flash error" role="alert">[^<]+\(INVALID_INPUT\)<\/p>/);
      // The page still offers the filters to correct them.
      expect(page.html).toContain('action="/console/operations"');
    }
  });

  it("a tenant key sees its pools' operations only", async () => {
    await seedPool(h, { id: 'pool-ops-mine', tenantId: 'ops-initech' });
    await seedPool(h, { id: 'pool-ops-theirs', tenantId: 'ops-other' });
    const mine = await seedNode(h, { poolId: 'pool-ops-mine', tenantId: 'ops-initech' });
    const theirs = await seedNode(h, { poolId: 'pool-ops-theirs', tenantId: 'ops-other' });
    const ops = [];
    for (const nodeId of [mine, theirs]) {
      ops.push(
        (await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'x' } })).body.operation.id,
      );
    }
    const key = await tenantKey(h, 'ops-initech', ['compute:nodes:read'], 'ops-reader');
    const page = await (await signedIn(key.secret)).get('/console/operations?kind=drain');
    expect(idsOf(page.html)).toContain(ops[0]);
    expect(idsOf(page.html)).not.toContain(ops[1]);
    expect(page.html).not.toContain(theirs);
  });
});
