import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNode } from '../support/builders';
import { call } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { simulatedFleet, type SimulatedFleet } from '../support/simulated-fleet';
import { badge, csrfOf, flashOf, signedIn, useConsole, type Page } from './console-client';

const h = useHarness();
const server = useConsole(h);

const POOL = 'pool-console-roll';
let fleet: SimulatedFleet;
beforeAll(async () => {
  fleet = await simulatedFleet(h, { poolId: POOL, count: 3, api: server.base, rebootMs: 200 });
});
afterAll(() => fleet?.close());

const operationIdIn = (page: Page) => /operation (op_[0-9a-z]{26}) is /.exec(flashOf(page)?.[1] ?? '')?.[1];

type Operation = { status: string; progress: { phase: string; waitingFor: any } };

/** The operation once `done` says so. */
function until(id: string, done: (op: Operation) => boolean) {
  return eventually(async () => {
    const op = (await call<Operation>(h, 'GET', `/v1/operations/${id}`)).body;
    return done(op) ? op : undefined;
  }, 60_000);
}

describe('rolling maintenance in the console', () => {
  it('starts from the pool page (no CSRF, no call); one row per node, every step done', async () => {
    const op = await signedIn(server.base, h.operatorKey);
    const page = await op.get(`/console/pools/${POOL}`);
    expect(page.html).toContain('This pool has had no rolling maintenance.');
    expect(page.html).toContain(`action="/console/pools/${POOL}/maintenance"`);
    const form = {
      steps: 'reboot\r\nverify\r\n\r\nuncordon\r\n',
      maxConcurrent: '3',
      healthyAfter: '1s',
      reason: 'kernel 6.8, CHG-1',
    };

    const forged = await op.post(`/console/pools/${POOL}/maintenance`, form);
    expect(forged.status).toBe(403);
    const none = await call(h, 'GET', `/v1/operations?poolId=${POOL}&kind=pool-maintenance`);
    expect(none.body.items).toEqual([]);

    // A line that is not a step: nothing is sent.
    const bad = await op.post(`/console/pools/${POOL}/maintenance`, {
      ...form,
      csrf: csrfOf(page),
      steps: 'reboot\nreboot-now',
    });
    expect(flashOf(await op.get(bad.location!))).toEqual([
      'error',
      expect.stringMatching(
        /^Rolling maintenance refused: line 2 \(reboot-now\) is not a step: .*nothing was sent\.$/,
      ),
    ]);

    const asked = await op.post(`/console/pools/${POOL}/maintenance`, { ...form, csrf: csrfOf(page) });
    expect(asked.location).toBe(`/console/pools/${POOL}`);
    const id = operationIdIn(await op.get(asked.location!));
    expect(id).toBeDefined();
    const ended = await until(id!, (o) => o.status !== 'pending' && o.status !== 'running');
    expect(ended.status).toBe('succeeded');

    const shown = await op.get(`/console/pools/${POOL}`);
    expect(shown.html).toContain('id="live-pool-maintenance" data-live=""');
    expect(shown.html).toContain(`<a href="/console/operations/${id}"><code>${id}</code></a>`);
    expect(shown.html).toContain('3 succeeded · 0 running · 0 pending · 0 failed · 0 cancelled');
    for (const nodeId of fleet.nodes) {
      const { hostname } = await readNode(h, nodeId);
      const row = `<span data-node-row="${nodeId}"><a href="/console/nodes/${nodeId}">${hostname}</a> `;
      expect(shown.html).toMatch(new RegExp(row + badge('status', 'succeeded').source));
    }
    // Three rows of three bars, each saying done in words; the counts per step.
    expect(
      shown.html.match(/<li class="timeline-step done" data-step="(reboot|verify|uncordon)">/g),
    ).toHaveLength(9);
    expect(shown.html.match(/<span class="timeline-state">done<\/span>/g)).toHaveLength(9);
    expect(shown.html).toContain('<td><code>verify</code></td><td>0</td><td>3</td>');
    // The operation page shows the same rows; it is over: no controls.
    const opPage = await op.get(`/console/operations/${id}`);
    expect(opPage.html.match(/data-node-row=/g)).toHaveLength(3);
    expect(opPage.html).not.toContain(`/console/operations/${id}/resume`);
    // And as a Gantt: a row per node, a bar per step, its text alternative and its table in words.
    expect(opPage.html).toContain(
      `<title id="rolling-${id}-title">Rolling maintenance ${id}, node by node</title>`,
    );
    expect(opPage.html).toMatch(
      new RegExp(`<desc id="rolling-${id}-desc">3 nodes from [\\d:]+ to [\\d:]+ UTC;`),
    );
    expect(opPage.html.match(/<g class="gantt-row" data-node=/g)).toHaveLength(3);
    expect(opPage.html.match(/<rect data-step="(reboot|verify|uncordon)" data-state="done"/g)).toHaveLength(
      9,
    );
    for (const nodeId of fleet.nodes) {
      const { hostname } = await readNode(h, nodeId);
      expect(opPage.html).toMatch(
        new RegExp(
          `<tr data-node="${nodeId}"><td><a href="/console/nodes/${nodeId}" title="${nodeId}">${hostname}</a></td><td>succeeded</td><td>reboot done [\\d:]+ → [\\d:]+; verify done [\\d:]+ → [\\d:]+; uncordon done`,
        ),
      );
    }
    // Over: no line at now.
    expect(opPage.html).not.toContain('>now</text>');
  });

  it('pauses at maxFailures: Paused, the failure with its reason and output, cancel behind its confirmation, Resume (not without CSRF)', async () => {
    const [first] = [...fleet.nodes].sort();
    fleet.simulator.actionOutcomes({ 'driver-upgrade': 'fail' }, first);
    const op = await signedIn(server.base, h.operatorKey);
    const page = await op.get(`/console/pools/${POOL}`);
    const asked = await op.post(`/console/pools/${POOL}/maintenance`, {
      csrf: csrfOf(page),
      steps: 'run:driver-upgrade\nuncordon',
      maxFailures: '1',
      reason: 'driver 570',
    });
    const id = operationIdIn(await op.get(asked.location!))!;
    const paused = await until(
      id,
      (o) => o.progress.phase === 'paused' && o.progress.waitingFor.counts.running === 0,
    );
    const failure = paused.progress.waitingFor.nodes.find((n: { nodeId: string }) => n.nodeId === first);
    expect(failure.reason).toMatch(/^driver-upgrade failed \(exit 1\)/);
    const child = (await call(h, 'GET', `/v1/operations/${failure.operationId}`)).body;
    const commandId = child.progress.waitingFor.steps[0].commandId;

    const shown = await op.get(`/console/operations/${id}`);
    expect(shown.html).toMatch(new RegExp(`<span data-rolling-state="">${badge('status', 'Paused').source}`));
    expect(shown.html).toContain('Paused at 1 failed of at most 1');
    const failed = /<li data-failed-node="[^"]+">([\s\S]*?)<\/li>/.exec(shown.html)?.[1] ?? '';
    expect(failed).toContain(`<a href="/console/nodes/${first}">`);
    expect(failed).toContain('at <code>run:driver-upgrade</code>');
    expect(failed).toContain('driver-upgrade failed (exit 1)');
    expect(failed).toContain(`<a href="/console/commands/${commandId}">its output</a>`);
    expect(shown.html).toContain(`<li class="timeline-step failed" data-step="run:driver-upgrade">`);
    expect(shown.html).toContain(`action="/console/operations/${id}/resume"`);

    // Cancel: its page says what stays as it is; a POST that skipped it makes no call.
    const confirm = await op.get(`/console/operations/${id}/cancel?back=pool:${POOL}`);
    expect(confirm.html).toContain('stay cordoned');
    expect(confirm.html).toContain('<select name="children">');
    expect(confirm.html).toContain(`<a href="/console/pools/${POOL}">Back, without cancelling</a>`);
    expect(confirm.html).toContain((await readNode(h, first!)).hostname);
    const skipped = await op.post(`/console/operations/${id}/cancel`, { csrf: csrfOf(confirm), reason: 'x' });
    expect(skipped.location).toBe(`/console/operations/${id}/cancel`);
    expect((await call(h, 'GET', `/v1/operations/${id}`)).body.status).toBe('running');

    const forged = await op.post(`/console/operations/${id}/resume`, { reason: 'bad card' });
    expect(forged.status).toBe(403);
    expect((await call(h, 'GET', `/v1/operations/${id}`)).body.progress.phase).toBe('paused');

    const resumed = await op.post(`/console/operations/${id}/resume`, {
      csrf: csrfOf(shown),
      back: `pool:${POOL}`,
      reason: 'node 1 has a bad card',
    });
    expect(resumed.location).toBe(`/console/pools/${POOL}`);
    expect(flashOf(await op.get(resumed.location!))).toEqual([
      'ok',
      `Rolling maintenance ${id} resumed: failures count again from now.`,
    ]);
    const ended = await until(id, (o) => o.status !== 'pending' && o.status !== 'running');
    expect(ended.progress.waitingFor.counts).toMatchObject({ succeeded: 2, failed: 1, pending: 0 });
    const after = await op.get(`/console/pools/${POOL}`);
    expect(after.html).toMatch(new RegExp(`<span data-rolling-state="">${badge('status', 'failed').source}`));
    expect(after.html).not.toContain(`action="/console/operations/${id}/resume"`);
  });

  it('cancels from its confirmation page with its running node maintenances: they end cancelled, the node stays cordoned', async () => {
    for (const nodeId of fleet.nodes) await fleet.simulator.pause(nodeId);
    try {
      const op = await signedIn(server.base, h.operatorKey);
      const page = await op.get(`/console/pools/${POOL}`);
      const asked = await op.post(`/console/pools/${POOL}/maintenance`, {
        csrf: csrfOf(page),
        steps: 'reboot',
        reason: 'one more',
      });
      const id = operationIdIn(await op.get(asked.location!))!;
      const running = await until(id, (o) => o.progress.waitingFor?.counts.running === 1);
      const [reached] = running.progress.waitingFor.nodes;
      const confirm = await op.get(`/console/operations/${id}/cancel?back=pool:${POOL}`);
      const cancelled = await op.post(`/console/operations/${id}/cancel`, {
        csrf: csrfOf(confirm),
        confirm: 'yes',
        back: `pool:${POOL}`,
        children: 'cancel',
        reason: 'not tonight',
      });
      expect(cancelled.location).toBe(`/console/pools/${POOL}`);
      expect(flashOf(await op.get(cancelled.location!))?.[0]).toBe('ok');
      expect((await call(h, 'GET', `/v1/operations/${id}`)).body.status).toBe('cancelled');
      expect((await call(h, 'GET', `/v1/operations/${reached.operationId}`)).body.status).toBe('cancelled');
      expect((await readNode(h, reached.nodeId)).cordoned).toBe(true);
    } finally {
      for (const nodeId of fleet.nodes) fleet.simulator.resume(nodeId);
    }
    await h.temporal.workflow.getHandle(`pool-maintenance/${POOL}`).result();
  });
});
