import { describe, expect, it } from 'vitest';
import { allocate, call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { csrfOf, flashOf, useConsole, signedIn as signedInAs } from './console-client';

const h = useHarness();
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const server = useConsole(h, { temporalUiUrl: TEMPORAL_UI });

const poolDrainsOf = async (poolId: string) =>
  (
    (await call(h, 'GET', '/v1/operations?kind=pool-drain&limit=100')).body.items as { poolId: string }[]
  ).filter((op) => op.poolId === poolId);

const signedIn = (key: string) => signedInAs(server.base, key);

describe('pools pages', () => {
  it('the pools list and a pool page show what the API answers: policy in words, grants, capacity, nodes', async () => {
    await seedPool(h, {
      id: 'pool-pp-east',
      tenantId: 'acme',
      grants: ['globex'],
      kind: 'provider',
      policy: {
        lostAfter: '15m',
        maxUnavailable: '25%',
        remediation: { GpuXidError: { ladder: ['reset-accelerator'], attemptTimeout: '5m' } },
      },
    });
    const a = await seedNode(h, { poolId: 'pool-pp-east', tenantId: 'acme', hostname: 'pp-gpu-1' });
    await seedNode(h, { poolId: 'pool-pp-east', tenantId: 'acme', hostname: 'pp-gpu-2' });
    await call(h, 'POST', `/v1/nodes/${a}/cordon`, { body: {} });
    const browser = await signedIn(h.operatorKey);

    const list = await browser.get('/console/pools');
    expect(list.status).toBe(200);
    expect(list.html).toContain('href="/console/pools/pool-pp-east"');
    expect(list.html).toContain('tenant acme');
    expect(list.html).toContain('globex');
    // The nav links to every page this operator key can use.
    for (const href of ['/console/pools', '/console/tokens', '/console/operations']) {
      expect(list.html).toContain(`href="${href}"`);
    }

    const page = await browser.get('/console/pools/pool-pp-east');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h1>Pool pool-pp-east <span class="muted">provider</span></h1>');
    expect(page.html).toContain('<dd>tenant acme</dd>');
    expect(page.html).toContain('<dd>tenant globex</dd>');
    expect(page.html).toContain('a node unreachable for longer than 15m is marked lost');
    expect(page.html).toContain('at most 25% of its nodes unavailable at once');
    // maxUnhealthy is not set: its default, said to be one.
    expect(page.html).toMatch(/at most 40% of its nodes unhealthy[^<]*\(default\)/);
    expect(page.html).toContain(
      '<code>GpuXidError</code></td><td>reset-accelerator</td><td>5m</td><td>60s (default)</td>',
    );
    // Capacity: 2 nodes, one cordoned, one schedulable.
    const capacity = (await call(h, 'GET', '/v1/pools/pool-pp-east/capacity')).body;
    expect(capacity).toMatchObject({ total: 2, buckets: { cordoned: 1, schedulable: 1 } });
    // In the bars' order: total, schedulable, cordoned, unhealthy, maintenance, unreachable.
    expect(page.html).toContain('<td>2</td><td>1</td><td>1</td><td>0</td><td>0</td><td>0</td>');
    expect(page.html).toContain('pp-gpu-1');
    expect(page.html).toContain('pp-gpu-2');
    expect(page.html).toContain('href="/console/nodes?poolId=pool-pp-east"');
    expect(page.html).toContain('No pool drain is running.');
    expect(list.html).not.toContain('running since');
    expect(page.html).toContain('action="/console/pools/pool-pp-east/drain"');
    // The drain's region updates live, following every event the key sees.
    expect(page.html).toContain('id="live-pool-drain" data-live=""');
    expect(page.html).toContain('<body data-watch="">');
  });

  it('pool drain from the form makes exactly one POST: one operation, the selected nodes draining', async () => {
    await seedPool(h, { id: 'pool-pd-form', tenantId: 'acme' });
    const b7: string[] = [];
    for (let i = 1; i <= 3; i++) {
      b7.push(await seedNode(h, { poolId: 'pool-pd-form', tenantId: 'acme', labels: { rack: 'b7' } }));
    }
    const other = await seedNode(h, { poolId: 'pool-pd-form', tenantId: 'acme', labels: { rack: 'b8' } });
    // One allocation keeps its node's drain waiting, so the pool drain stays running.
    await allocate(h, b7[0]!, 'acme');
    const browser = await signedIn(h.operatorKey);
    const page = await browser.get('/console/pools/pool-pd-form');

    const done = await browser.post('/console/pools/pool-pd-form/drain', {
      csrf: csrfOf(page),
      selector: 'rack=b7',
      maxConcurrent: '2',
      deadline: '2h',
      reason: 'driver roll-out',
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/console/pools/pool-pd-form');
    const shown = await browser.get(done.location!);
    expect(flashOf(shown)?.[0]).toBe('ok');
    expect(flashOf(shown)?.[1]).toMatch(
      /^Pool pool-pd-form draining the nodes with rack=b7: operation op_[0-9a-z]{26} is (pending|running)\.$/,
    );

    const drains = await poolDrainsOf('pool-pd-form');
    expect(drains).toHaveLength(1);
    expect(drains[0]).toMatchObject({ reason: 'driver roll-out', actor: 'key:bootstrap-operator' });
    const op = (await call(h, 'GET', `/v1/operations/${(drains[0] as { id?: string }).id}`)).body;
    expect(op.result).toMatchObject({ maxConcurrent: 2, nodeIds: [...b7].sort() });
    // Every rack b7 node drains: the two without allocations end drained (cordoned), the held one
    // stays draining; b8 is never touched.
    await eventually(async () => {
      const [held, ...free] = await Promise.all(
        b7.map(async (id) => (await call(h, 'GET', `/v1/nodes/${id}`)).body),
      );
      const settled =
        held.noScheduleReasons.includes('draining') &&
        free.every((n) => n.cordoned && !n.noScheduleReasons.includes('draining'));
      return settled ? true : undefined;
    }, 30_000);
    expect((await call(h, 'GET', `/v1/nodes/${other}`)).body.cordoned).toBe(false);
    expect((await call(h, 'GET', `/v1/nodes/${other}`)).body.noScheduleReasons).not.toContain('draining');

    // The pool page shows it running with its progress and its workflow, and offers no second drain.
    const running = await eventually(async () => {
      const p = await browser.get('/console/pools/pool-pd-form');
      return p.html.includes('class="progress"') ? p : undefined;
    });
    expect(running.html).toContain(op.id);
    expect(running.html).toContain(
      `href="${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent('pool-drain/pool-pd-form')}"`,
    );
    expect(running.html).not.toContain('action="/console/pools/pool-pd-form/drain"');
    expect(running.html).toContain(`action="/console/operations/${op.id}/cancel"`);
    expect(running.html).toContain('<input type="hidden" name="back" value="pool:pool-pd-form"/>');
    // The pools list says the pool is draining.
    const list = await browser.get('/console/pools');
    expect(list.html).toMatch(
      new RegExp(`<a href="/console/pools/pool-pd-form">running since <time datetime="${op.createdAt}"`),
    );

    // Cancel through its confirmation page, letting the node drains finish: the pool drain ends cancelled.
    const confirm = await browser.get(`/console/operations/${op.id}/cancel?back=pool:pool-pd-form`);
    expect(confirm.html).toContain('No other node of pool pool-pd-form starts draining');
    expect(confirm.html).toContain('<select name="children">');
    const cancelled = await browser.post(`/console/operations/${op.id}/cancel`, {
      csrf: csrfOf(confirm),
      confirm: 'yes',
      back: 'pool:pool-pd-form',
      children: 'finish',
      reason: 'roll-out postponed',
    });
    expect(cancelled.status).toBe(303);
    expect(cancelled.location).toBe('/console/pools/pool-pd-form');
    expect(flashOf(await browser.get(cancelled.location!))?.[0]).toBe('ok');
    const after = await eventually(async () => {
      const o = (await call(h, 'GET', `/v1/operations/${op.id}`)).body;
      return o.status === 'cancelled' ? o : undefined;
    });
    expect(after.cancellation).toMatchObject({ reason: 'roll-out postponed', children: 'finish' });
    for (const id of b7) {
      const drain = (await call(h, 'GET', `/v1/operations?nodeId=${id}&kind=drain&status=running`)).body;
      for (const d of drain.items) await call(h, 'DELETE', `/v1/operations/${d.id}`, { body: {} });
    }
  });

  it("a bad selector is the API's refusal in the flash; nothing starts", async () => {
    await seedPool(h, { id: 'pool-pd-bad' });
    await seedNode(h, { poolId: 'pool-pd-bad' });
    const browser = await signedIn(h.operatorKey);
    const page = await browser.get('/console/pools/pool-pd-bad');
    const tries: Record<string, string>[] = [
      { selector: 'rack', reason: 'x' },
      { maxConcurrent: 'many', reason: 'x' },
      { maxConcurrent: '0', reason: 'x' },
      { reason: '' },
    ];
    for (const fields of tries) {
      const done = await browser.post('/console/pools/pool-pd-bad/drain', { csrf: csrfOf(page), ...fields });
      expect(done.status).toBe(303);
      const shown = await browser.get(done.location!);
      expect(flashOf(shown)?.[0], JSON.stringify(fields)).toBe('error');
      expect(flashOf(shown)?.[1]).toMatch(/^Pool drain refused: .+ \(INVALID_INPUT\)$/);
    }
    expect(await poolDrainsOf('pool-pd-bad')).toHaveLength(0);
  });

  it('a pool drain without its CSRF token is 403 and starts nothing', async () => {
    await seedPool(h, { id: 'pool-pd-csrf' });
    const nodeId = await seedNode(h, { poolId: 'pool-pd-csrf' });
    const browser = await signedIn(h.operatorKey);
    const forms: Record<string, string>[] = [{}, { csrf: 'not-the-token' }];
    for (const fields of forms) {
      const done = await browser.post('/console/pools/pool-pd-csrf/drain', { ...fields, reason: 'x' });
      expect(done.status).toBe(403);
      expect(done.html).toContain('nothing was changed');
    }
    expect(await poolDrainsOf('pool-pd-csrf')).toHaveLength(0);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body.noScheduleReasons).toEqual([]);
  });

  it('bad pool ids answer the 404 page, never a 500', async () => {
    await seedPool(h, { id: 'pool-pd-404' });
    const browser = await signedIn(h.operatorKey);
    for (const path of [
      '/console/pools/Not_A_Pool',
      '/console/pools/no-such-pool',
      `/console/pools/${'a'.repeat(64)}`,
    ]) {
      const page = await browser.get(path);
      expect(page.status, path).toBe(404);
      expect(page.html).toContain('<h1>Not found</h1>');
    }
    const page = await browser.get('/console/pools/pool-pd-404');
    // A shape the API refuses is the 404 page, without a call; a pool it does not know, its refusal.
    const badShape = await browser.post('/console/pools/Not_A_Pool/drain', {
      csrf: csrfOf(page),
      reason: 'x',
    });
    expect(badShape.status).toBe(404);
    const unknown = await browser.post('/console/pools/no-such-pool/drain', {
      csrf: csrfOf(page),
      reason: 'x',
    });
    expect(unknown.status).toBe(303);
    expect(unknown.location).toBe('/console/pools');
    expect(flashOf(await browser.get(unknown.location!))).toEqual([
      'error',
      expect.stringMatching(/^Pool drain refused: .+ \(NOT_FOUND\)$/),
    ]);
    const cancel = await browser.post('/console/operations/op_nope/cancel', {
      csrf: csrfOf(page),
      confirm: 'yes',
    });
    expect(cancel.status).toBe(404);
  });

  it('a tenant key sees only its pools (owned or granted), and no drain form without the drain action', async () => {
    await seedPool(h, { id: 'pool-tn-own', tenantId: 'tn-initech' });
    await seedPool(h, { id: 'pool-tn-granted', tenantId: 'tn-other', grants: ['tn-initech'] });
    await seedPool(h, { id: 'pool-tn-hidden', tenantId: 'tn-other' });
    await seedNode(h, { poolId: 'pool-tn-own', tenantId: 'tn-initech' });
    const reader = await tenantKey(h, 'tn-initech', ['compute:nodes:read'], 'tn-reader');
    const browser = await signedIn(reader.secret);

    const list = await browser.get('/console/pools');
    expect(list.html).toContain('href="/console/pools/pool-tn-own"');
    expect(list.html).toContain('href="/console/pools/pool-tn-granted"');
    expect(list.html).not.toContain('pool-tn-hidden');
    // No join tokens for a key without the tokens actions.
    expect(list.html).not.toContain('href="/console/tokens"');

    const own = await browser.get('/console/pools/pool-tn-own');
    expect(own.status).toBe(200);
    expect(own.html).not.toContain('action="/console/pools/pool-tn-own/drain"');
    expect(own.html).not.toContain('/cancel"');
    expect((await browser.get('/console/pools/pool-tn-hidden')).status).toBe(404);

    // Posting the form anyway: the API's refusal, nothing started.
    const done = await browser.post('/console/pools/pool-tn-own/drain', { csrf: csrfOf(own), reason: 'x' });
    expect(flashOf(await browser.get(done.location!))).toEqual([
      'error',
      expect.stringMatching(/^Pool drain refused: .+ \(FORBIDDEN\)$/),
    ]);
    expect(await poolDrainsOf('pool-tn-own')).toHaveLength(0);

    // With the drain action the form is there, on its own pool.
    const drainer = await tenantKey(
      h,
      'tn-initech',
      ['compute:nodes:read', 'compute:nodes:drain'],
      'tn-drainer',
    );
    const withDrain = await signedIn(drainer.secret);
    const page = await withDrain.get('/console/pools/pool-tn-own');
    expect(page.html).toContain('action="/console/pools/pool-tn-own/drain"');
    // Cancelling is for operators only: no cancel form for a tenant.
    expect(page.html).not.toContain('/cancel"');
  });
});
