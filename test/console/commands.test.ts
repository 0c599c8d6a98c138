import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATED_ACTIONS } from '../../agent/simulated-actions';
import { readNode } from '../support/builders';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { simulatedFleet, type SimulatedFleet } from '../support/simulated-fleet';
import { badge, Browser, csrfOf, flashOf, signedIn, useConsole } from './console-client';

const h = useHarness();
const server = useConsole(h);

/** What the machine prints: markup, and a right-to-left override that would reorder what follows. */
const HOSTILE = '<script>alert("owned")</script>\nreport-\u202Etxt.exe\u202C done\n';

let fleet: SimulatedFleet;
let nodeId: string;
beforeAll(async () => {
  fleet = await simulatedFleet(h, {
    poolId: 'pool-cmd',
    count: 1,
    api: server.base,
    rebootMs: 500,
    actions: { ...SIMULATED_ACTIONS, diagnostics: { stdout: HOSTILE } },
  });
  nodeId = fleet.nodes[0]!;
});
afterAll(() => fleet?.close());

const commandIdIn = (location: string | null) =>
  /\/console\/commands\/(cmd_[0-9a-z]{26})$/.exec(location ?? '')?.[1];

describe('node commands in the console', () => {
  it('runs diagnostics from the node page; the output renders inert and downloads as it is; no CSRF, no command', async () => {
    const op = await signedIn(server.base, h.operatorKey);
    const page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain(`action="/console/nodes/${nodeId}/commands"`);
    expect(page.html).toContain('name="action" value="diagnostics"');
    // A declared parameter: its input with the default filled in, its pattern shown.
    expect(page.html).toContain('name="arg.since" value="1h"');
    expect(page.html).toContain('<code>[0-9]+[smhd]</code>');
    // The restarting action is the verified Reboot, not a one-click form.
    expect(page.html).not.toContain('name="action" value="reboot"');

    const refused = await op.post(`/console/nodes/${nodeId}/commands`, {
      action: 'diagnostics',
      reason: 'x',
    });
    expect(refused.status).toBe(403);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}/commands`)).body.items).toEqual([]);

    const ran = await op.post(`/console/nodes/${nodeId}/commands`, {
      csrf: csrfOf(page),
      idempotencyKey: 'console-run-test-0001',
      action: 'diagnostics',
      reason: 'xid storm, ticket 4711',
    });
    const id = commandIdIn(ran.location);
    expect(id, String(ran.location)).toBeDefined();
    const shown = await eventually(async () => {
      const p = await op.get(`/console/commands/${id}`);
      return badge('status', 'succeeded').test(p.html) ? p : undefined;
    });
    expect(shown.html).toContain('xid storm, ticket 4711');
    expect(shown.html).toContain(`key:`);
    const stdout = /<pre class="output" id="stdout"[^>]*>([\s\S]*?)<\/pre>/.exec(shown.html)?.[1] ?? '';
    expect(stdout).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
    expect(shown.html).not.toContain('<script>alert');
    // The bidi controls are markers, never the characters themselves.
    expect(shown.html).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expect(stdout).toContain('report-<span class="hidden-char"');
    expect(stdout).toContain('⟨U+202E⟩</span>txt.exe');
    expect(shown.html).toContain(`href="/console/commands/${id}/stdout"`);

    const download = await op.get(`/console/commands/${id}/stdout`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${id}-stdout.txt"`);
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(download.html).toBe(HOSTILE);

    // The node page lists it, linked, with its exit code.
    const listed = await op.get(`/console/nodes/${nodeId}`);
    expect(listed.html).toContain(`<a href="/console/commands/${id}"><code>${id}</code></a>`);
  });

  it('reboots through the confirmation page: the node comes back on a new boot id, the timeline shows each step', async () => {
    const before = await readNode(h, nodeId);
    const op = await signedIn(server.base, h.operatorKey);
    // The node page's Actions menu links to its confirmation page.
    expect((await op.get(`/console/nodes/${nodeId}`)).html).toContain(
      `href="/console/nodes/${nodeId}/reboot"`,
    );
    const confirm = await op.get(`/console/nodes/${nodeId}/reboot`);
    expect(confirm.status).toBe(200);
    const key = /name="idempotencyKey" value="([^"]+)"/.exec(confirm.html)?.[1];
    expect(key).toMatch(/^console-reboot-/);

    // A POST that skipped the confirmation makes no call.
    const skipped = await op.post(`/console/nodes/${nodeId}/reboot`, { csrf: csrfOf(confirm), reason: 'x' });
    expect(skipped.location).toBe(`/console/nodes/${nodeId}/reboot`);
    expect((await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=maintenance`)).body.items).toEqual([]);

    const asked = await op.post(`/console/nodes/${nodeId}/reboot`, {
      csrf: csrfOf(confirm),
      confirm: 'yes',
      idempotencyKey: key!,
      uncordon: 'yes',
      healthyAfter: '1s',
      reason: 'kernel 6.8',
    });
    expect(asked.location).toBe(`/console/nodes/${nodeId}`);
    const node = await op.get(asked.location!);
    expect(flashOf(node)).toEqual([
      'ok',
      expect.stringMatching(/: reboot requested as maintenance op_\w+ \(its steps are under Operations\)\.$/),
    ]);

    const ended = await eventually(async () => {
      const [m] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=maintenance`)).body.items;
      return m && m.status !== 'pending' && m.status !== 'running' ? m : undefined;
    }, 60_000);
    expect(ended.status).toBe('succeeded');
    const after = await readNode(h, nodeId);
    expect(after.bootId).not.toBe(before.bootId);
    expect(after.cordoned).toBe(false);

    const page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain(`(boot ${after.bootId})`);
    const reboot = (await call(h, 'GET', `/v1/operations/${ended.id}`)).body.progress.waitingFor.steps[0];
    expect(reboot).toMatchObject({ step: 'reboot', outcome: 'done' });
    for (const step of ['reboot', 'verify', 'uncordon']) {
      expect(page.html).toContain(`<li class="timeline-step done" data-step="${step}">`);
    }
    expect(page.html).toContain(`<a href="/console/commands/${reboot.commandId}"><code>reboot</code></a>`);
    expect(page.html).toContain(`<a href="/console/operations/${ended.id}">`);
    const opPage = await op.get(`/console/operations/${ended.id}`);
    expect(opPage.html).toContain('data-step="verify"');
  });

  it('a node whose agent never said its actions: a typed action, a pending command cancelled after its box; a key without the action sees no form', async () => {
    await seedPool(h, { id: 'pool-quiet', tenantId: 'quiet' });
    const quiet = await seedNode(h, { poolId: 'pool-quiet', tenantId: 'quiet', hostname: 'gpu-quiet-1' });
    const op = await signedIn(server.base, h.operatorKey);
    const page = await op.get(`/console/nodes/${quiet}`);
    expect(page.html).toContain('data-actions-unknown');
    const ran = await op.post(`/console/nodes/${quiet}/commands`, {
      csrf: csrfOf(page),
      action: 'diagnostics',
      reason: 'before it connects',
    });
    const id = commandIdIn(ran.location);
    const pending = await op.get(ran.location!);
    expect(pending.html).toContain(`action="/console/commands/${id}/cancel"`);

    const unticked = await op.post(`/console/commands/${id}/cancel`, { csrf: csrfOf(pending) });
    expect(flashOf(await op.get(unticked.location!))?.[0]).toBe('error');
    expect((await call(h, 'GET', `/v1/commands/${id}`)).body.status).toBe('pending');
    await op.post(`/console/commands/${id}/cancel`, { csrf: csrfOf(pending), confirm: 'yes' });
    expect((await call(h, 'GET', `/v1/commands/${id}`)).body.status).toBe('cancelled');

    const reader = await tenantKey(h, 'quiet', ['compute:nodes:read']);
    const tenant = new Browser(server.base);
    await tenant.signIn(reader.secret);
    const seen = await tenant.get(`/console/nodes/${quiet}`);
    expect(seen.status).toBe(200);
    expect(seen.html).toMatch(badge('status', 'cancelled'));
    expect(seen.html).not.toContain(`action="/console/nodes/${quiet}/commands"`);
    expect(seen.html).not.toContain(`/console/nodes/${quiet}/reboot"`);
    expect(seen.html).not.toContain(`href="/console/commands/${id}"`);
  });
});
