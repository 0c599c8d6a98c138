import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeCommands, operations } from '../../db/schema';
import { newId } from '../../domain/ids';
import { operationWhen, purge, readNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { Browser, csrfOf, flashOf, unescapeHtml, useConsole, type Page } from './console-client';

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
    // Each node by its hostname, its id one click away (the link) and on hover.
    expect(all.html).toContain(
      `<a href="/console/nodes/${held}" title="${held}" data-node="${held}">ops-held</a>`,
    );
    expect(all.html).toContain(
      `<a href="/console/nodes/${free}" title="${free}" data-node="${free}">ops-free</a>`,
    );
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

/** The words of a cancel confirmation's list of what it puts back, tags stripped. */
const putsBack = (page: Page) =>
  unescapeHtml(
    (/<ul class="confirm-says"[^>]*>([\s\S]*?)<\/ul>/.exec(page.html)?.[1] ?? '').replace(/<[^>]+>/g, ''),
  );

/** Opens an operation's page, follows its Cancel to the confirmation; the confirmation page. */
async function confirmationOf(browser: Browser, id: string, kind: string): Promise<Page> {
  const page = await browser.get(`/console/operations/${id}`);
  expect(page.html).toContain(
    `<form method="get" action="/console/operations/${id}/cancel" class="controls">`,
  );
  expect(page.html).toContain(`Cancel ${kind}…</button>`);
  const confirm = await browser.get(`/console/operations/${id}/cancel`);
  expect(confirm.status).toBe(200);
  return confirm;
}

/** Sends a confirmation page's form as it is, with `reason`. */
const confirmCancel = (browser: Browser, id: string, confirm: Page, fields: Record<string, string> = {}) =>
  browser.post(`/console/operations/${id}/cancel`, {
    csrf: csrfOf(confirm),
    confirm: 'yes',
    back: 'operation',
    reason: 'changed my mind',
    ...fields,
  });

describe('cancelling an operation from its page', () => {
  it('a drain: the confirmation says what it puts back and changes nothing; confirmed, draining is off and the node stays cordoned', async () => {
    await seedPool(h, { id: 'pool-ops-cancel', tenantId: 'acme' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-ops-cancel',
      tenantId: 'acme',
      hostname: 'ops-cancel-drain',
    });
    const held = await allocate(h, nodeId, 'acme');
    const drain = (
      await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'psu', deadline: '2h' } })
    ).body.operation;
    const waiting = await operationWhen(h, drain.id, (op) => op.progress.phase === 'waiting');
    const browser = await signedIn(h.operatorKey);

    // Its page draws its allocation against its deadline, with the same in words.
    const page = await browser.get(`/console/operations/${drain.id}`);
    const deadline = (waiting.progress.deadline as string).slice(11, 19);
    expect(page.html).toContain(
      `<title id="drain-${drain.id}-title">Drain ${drain.id}: its allocations against its deadline</title>`,
    );
    expect(page.html).toContain(`the deadline at ${deadline}; the table below has each allocation.</desc>`);
    expect(page.html).toContain(`>deadline ${deadline.slice(0, 5)}</text>`);
    expect(page.html).toContain('>now</text>');
    expect(page.html).toMatch(
      new RegExp(
        `<tr data-allocation="${held}"><td><code>${held}</code></td><td>acme</td><td>held since [\\d:]+</td><td>released by force at the deadline ${deadline}</td></tr>`,
      ),
    );

    const confirm = await confirmationOf(browser, drain.id, 'drain');
    expect(confirm.html).toContain('<h1>Cancel drain <code>');
    expect(confirm.html).toContain('ops-cancel-drain');
    const says = putsBack(confirm);
    expect(says).toContain('Draining comes off ops-cancel-drain');
    expect(says).toContain('the 1 live allocation keep running');
    expect(says).toContain('The node stays cordoned');
    expect(says).toContain("Its slot in the pool's disruption budget is given up");
    expect(confirm.html).toContain('name="reason"');
    expect(confirm.html).not.toContain('name="children"');

    // Nothing changed by reading it; a POST that skipped it, or without its CSRF token, makes no call.
    const skipped = await browser.post(`/console/operations/${drain.id}/cancel`, { csrf: csrfOf(confirm) });
    expect(skipped.location).toBe(`/console/operations/${drain.id}/cancel`);
    const forged = await browser.post(`/console/operations/${drain.id}/cancel`, { confirm: 'yes' });
    expect(forged.status).toBe(403);
    expect((await call(h, 'GET', `/v1/operations/${drain.id}`)).body.status).toBe('running');
    expect((await readNode(h, nodeId)).noScheduleReasons).toContain('draining');

    const done = await confirmCancel(browser, drain.id, confirm, { reason: 'wrong node' });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/operations/${drain.id}`);
    const after = await browser.get(done.location!);
    expect(flashOf(after)).toEqual([
      'ok',
      `Drain ${drain.id} cancelled: draining came off ops-cancel-drain, which stays cordoned.`,
    ]);
    // What the page said is what happened.
    const op = (await call(h, 'GET', `/v1/operations/${drain.id}`)).body;
    expect(op).toMatchObject({ status: 'cancelled', cancellation: { reason: 'wrong node' } });
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    // Over: no cancel any more, and its confirmation says why, with no form.
    expect(after.html).not.toContain(`/console/operations/${drain.id}/cancel`);
    const again = await browser.get(`/console/operations/${drain.id}/cancel`);
    expect(again.html).toContain(
      'This drain already cancelled: there is nothing to cancel, and nothing was changed.',
    );
    expect(again.html).not.toContain('name="confirm"');
  });

  it('a remediation, a purge and a maintenance: each confirmation says what it puts back; confirmed, the node is as it said', async () => {
    await seedPool(h, { id: 'pool-ops-kinds', tenantId: 'acme' });
    const browser = await signedIn(h.operatorKey);

    // A remediation: escalated to maintenance.
    const sick = await seedNode(h, { poolId: 'pool-ops-kinds', tenantId: 'acme', hostname: 'ops-sick' });
    await setNode(h, sick, {
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since: new Date().toISOString() }],
      noScheduleReasons: ['condition:GpuXidError'],
    });
    const remediation = (
      await call(h, 'POST', `/v1/nodes/${sick}/remediations`, { body: { condition: 'GpuXidError' } })
    ).body.operation;
    await eventually(async () => (await eventsOf(h, sick, 'node.remediation.attempted')).length === 1);
    const confirmRemediation = await confirmationOf(browser, remediation.id, 'remediation');
    expect(putsBack(confirmRemediation)).toContain('ops-sick is escalated to maintenance');
    expect((await readNode(h, sick)).maintenance).toBe(false);
    await confirmCancel(browser, remediation.id, confirmRemediation);
    expect((await call(h, 'GET', `/v1/operations/${remediation.id}`)).body.status).toBe('cancelled');
    expect((await readNode(h, sick)).maintenance).toBe(true);

    // A purge waiting for its node: the command withdrawn, the node stays purging.
    const old = await seedNode(h, { poolId: 'pool-ops-kinds', tenantId: 'acme', hostname: 'ops-old' });
    const purging = (await purge(h, old, { reason: 'EOL' })).body.operation;
    await operationWhen(h, purging.id, (op) => op.progress.phase === 'waiting-for-node');
    const confirmPurge = await confirmationOf(browser, purging.id, 'purge');
    const purgeSays = putsBack(confirmPurge);
    expect(purgeSays).toContain('The purge command is withdrawn if ops-old has not taken it yet');
    expect(purgeSays).toContain('The node stays purging');
    const purged = await confirmCancel(browser, purging.id, confirmPurge);
    expect(flashOf(await browser.get(purged.location!))).toEqual([
      'ok',
      `Purge ${purging.id} cancelled: its command was withdrawn; ops-old stays purging.`,
    ]);
    const [command] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.operationId, purging.id));
    expect(command!.status).toBe('cancelled');
    expect(await readNode(h, old)).toMatchObject({ provisionState: 'purging', deletedAt: null });

    // A maintenance draining its node: its drain cancelled too, the node stays cordoned.
    const busy = await seedNode(h, { poolId: 'pool-ops-kinds', tenantId: 'acme', hostname: 'ops-busy' });
    await allocate(h, busy, 'acme');
    const maintenance = (
      await call(h, 'POST', `/v1/nodes/${busy}/reboot`, { body: { reason: 'kernel', drain: {} } })
    ).body.operation;
    const draining = await operationWhen(h, maintenance.id, (op) => op.progress.phase === 'draining');
    const drainId = draining.progress.waitingFor.steps[0].operationId;
    expect(drainId).toBeDefined();
    const confirmMaintenance = await confirmationOf(browser, maintenance.id, 'maintenance');
    const maintenanceSays = putsBack(confirmMaintenance);
    expect(maintenanceSays).toContain('Its drain is cancelled (draining comes off ops-busy)');
    expect(maintenanceSays).toContain('its commands the node has not started are withdrawn');
    expect(maintenanceSays).toContain('The node stays cordoned');
    expect((await call(h, 'GET', `/v1/operations/${maintenance.id}`)).body.status).toBe('running');
    await confirmCancel(browser, maintenance.id, confirmMaintenance);
    expect((await call(h, 'GET', `/v1/operations/${maintenance.id}`)).body.status).toBe('cancelled');
    expect((await call(h, 'GET', `/v1/operations/${drainId}`)).body.status).toBe('cancelled');
    expect(await readNode(h, busy)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
  });

  it('a decommission: back to the state it was admitted from; past its point of no return the refusal is in the page and nothing changes', async () => {
    await seedPool(h, { id: 'pool-ops-decom', tenantId: 'acme' });
    const browser = await signedIn(h.operatorKey);
    const seedDecommission = async (hostname: string, stepsDone: string[]) => {
      const nodeId = await seedNode(h, { poolId: 'pool-ops-decom', tenantId: 'acme', hostname });
      await setNode(h, nodeId, { provisionState: 'decommissioning' });
      const id = newId('op');
      await h.db.insert(operations).values({
        id,
        kind: 'decommission',
        nodeId,
        poolId: 'pool-ops-decom',
        status: stepsDone.length ? 'running' : 'pending',
        phase: stepsDone.length ? 'cleaning-up' : 'waiting-for-worker',
        workflowId: `decommission/${nodeId}`,
        actor: 'key:bootstrap-operator',
        reason: 'retire',
        result: { admittedFrom: 'adopted' },
        waitingFor: { step: stepsDone.length ? 'decommissionAccelerators' : null, stepsDone } as never,
      });
      return { nodeId, id };
    };

    const early = await seedDecommission('ops-decom-early', []);
    const confirm = await confirmationOf(browser, early.id, 'decommission');
    expect(putsBack(confirm)).toContain(
      'Decommissioning is undone: ops-decom-early goes back to adopted, the state it was admitted from.',
    );
    expect((await readNode(h, early.nodeId)).provisionState).toBe('decommissioning');
    const done = await confirmCancel(browser, early.id, confirm);
    expect(flashOf(await browser.get(done.location!))?.[0]).toBe('ok');
    expect((await call(h, 'GET', `/v1/operations/${early.id}`)).body.status).toBe('cancelled');
    expect((await readNode(h, early.nodeId)).provisionState).toBe('adopted');

    // Past its point of no return: its page offers no cancel and says why.
    const late = await seedDecommission('ops-decom-late', ['revokeNodeIdentity']);
    const page = await browser.get(`/console/operations/${late.id}`);
    expect(page.html).toContain('data-cannot-cancel=""');
    expect(page.html).not.toContain(`action="/console/operations/${late.id}/cancel"`);
    const lateConfirm = await browser.get(`/console/operations/${late.id}/cancel`);
    expect(lateConfirm.html).toContain('past its point of no return');
    expect(lateConfirm.html).not.toContain('name="confirm"');
    // A form sent anyway (a page opened before that point): the API's refusal in words, nothing changed.
    const refused = await confirmCancel(browser, late.id, lateConfirm);
    expect(refused.status).toBe(409);
    expect(flashOf(refused)).toEqual([
      'error',
      expect.stringMatching(
        /^Cancel refused: this decommission is past its point of no return .*\(INVALID_STATE\)\. Nothing was changed\.$/,
      ),
    ]);
    expect((await call(h, 'GET', `/v1/operations/${late.id}`)).body).toMatchObject({
      status: 'running',
      cancellation: null,
    });
    expect((await readNode(h, late.nodeId)).provisionState).toBe('decommissioning');
  });

  it('an operation that finished before the confirmation was sent: the refusal is in the page; a tenant key gets no cancel', async () => {
    await seedPool(h, { id: 'pool-ops-done', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-ops-done', tenantId: 'acme', hostname: 'ops-done' });
    const held = await allocate(h, nodeId, 'acme');
    const drain = (await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'x' } })).body
      .operation;
    await operationWhen(h, drain.id, (op) => op.progress.phase === 'waiting');
    const browser = await signedIn(h.operatorKey);
    const confirm = await confirmationOf(browser, drain.id, 'drain');

    // A tenant key may read it but not cancel it: no button; its POST is the API's 403 in the page.
    const reader = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:drain'], 'ops-tenant');
    const tenant = await signedIn(reader.secret);
    const tenantPage = await tenant.get(`/console/operations/${drain.id}`);
    expect(tenantPage.status).toBe(200);
    expect(tenantPage.html).not.toContain(`/console/operations/${drain.id}/cancel`);
    const tenantTry = await confirmCancel(tenant, drain.id, tenantPage);
    expect(tenantTry.status).toBe(403);
    expect(flashOf(tenantTry)?.[1]).toMatch(/^Cancel refused: .+\(FORBIDDEN\)\. Nothing was changed\.$/);

    // It ends on its own before the operator confirms.
    await call(h, 'POST', `/v1/allocations/${held}/release`);
    await operationWhen(h, drain.id, (op) => op.status === 'succeeded');
    const refused = await confirmCancel(browser, drain.id, confirm);
    expect(refused.status).toBe(409);
    expect(flashOf(refused)).toEqual([
      'error',
      `Cancel refused: operation ${drain.id} already succeeded (INVALID_STATE). Nothing was changed.`,
    ]);
    expect(refused.html).toContain('This drain already succeeded: there is nothing to cancel');
    expect((await call(h, 'GET', `/v1/operations/${drain.id}`)).body.status).toBe('succeeded');
  });
});
