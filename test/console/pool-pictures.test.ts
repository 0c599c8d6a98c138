import { describe, expect, it } from 'vitest';
import { recordCapacity } from '../../db/capacity-history';
import { allocate, call, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { useConsole, signedIn as signedInAs } from './console-client';

const h = useHarness();
const server = useConsole(h);
const signedIn = (key: string) => signedInAs(server.base, key);

const HOUR = 3_600_000;
const count = (html: string, pattern: RegExp) => html.match(pattern)?.length ?? 0;
/** The part of the page one figure of `kind` holds (`data-window` or `data-operation`). */
const figure = (html: string, attribute: string) => {
  const from = html.indexOf(`<figure class="chart ${attribute}`);
  return from < 0 ? '' : html.slice(from, html.indexOf('</figure>', from));
};

describe("a pool's pictures", () => {
  it('its capacity over the last day and week: one stacked bar per recorded step, and the lowest in words', async () => {
    await seedPool(h, { id: 'pool-pic-cap', tenantId: 'acme' });
    const nodes = [];
    for (let i = 1; i <= 3; i++) {
      nodes.push(await seedNode(h, { poolId: 'pool-pic-cap', tenantId: 'acme', hostname: `cap-${i}` }));
    }
    const browser = await signedIn(h.operatorKey);
    const empty = await browser.get('/console/pools/pool-pic-cap');
    expect(empty.html).toContain('No capacity recorded for the last 24 hours yet');
    expect(empty.html).toContain('No capacity recorded for the last 7 days yet');

    // Two minutes an hour apart (each in its own step of both windows), a node cordoned between.
    const hourAgo = (hours: number) =>
      new Date(Math.floor((Date.now() - hours * HOUR) / HOUR) * HOUR + 60_000);
    await recordCapacity(h.db, hourAgo(3), 30);
    await call(h, 'POST', `/v1/nodes/${nodes[0]}/cordon`, { body: {} });
    await recordCapacity(h.db, hourAgo(2), 30);
    const page = await browser.get('/console/pools/pool-pic-cap');
    const day = figure(page.html, 'capacity-chart" data-window="24h');
    const week = figure(page.html, 'capacity-chart" data-window="7d');
    for (const chart of [day, week]) {
      expect(count(chart, /<g class="chart-step"/g)).toBe(2);
      // 3 schedulable, then 2 schedulable and 1 cordoned.
      expect(count(chart, /<rect data-bucket="schedulable"/g)).toBe(2);
      expect(count(chart, /<rect data-bucket="cordoned"/g)).toBe(1);
      expect(chart).toContain('lowest schedulable 67 % (2 of 3 nodes)');
      expect(chart).toContain('latest 67 % (2 of 3 nodes)');
    }
    const at = new Date(Math.floor((Date.now() - 2 * HOUR) / HOUR) * HOUR).toISOString();
    expect(week).toContain(`<g class="chart-step" data-at="${at}" data-total="3">`);
    // It is part of the capacity region, which updates without a reload.
    const region = page.html.slice(page.html.indexOf('id="live-pool-capacity"'));
    expect(region.indexOf('data-window="7d"')).toBeLessThan(region.indexOf('id="live-pool-nodes"'));
  });

  it('its pool drain node by node, live: who waits for the budget by hostname, who holds it, and the ways out', async () => {
    await seedPool(h, { id: 'pool-pic-drain', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const hosts = ['pic-a', 'pic-b'];
    const ids: string[] = [];
    for (const hostname of hosts) {
      const nodeId = await seedNode(h, { poolId: 'pool-pic-drain', tenantId: 'acme', hostname });
      await allocate(h, nodeId, 'acme');
      ids.push(nodeId);
    }
    const started = await call(h, 'POST', '/v1/pools/pool-pic-drain/drain', {
      body: { reason: 'firmware', maxConcurrent: 2, deadline: '0s' },
    });
    expect(started.status).toBe(202);
    const operationId: string = started.body.operation.id;
    const browser = await signedIn(h.operatorKey);
    // Both drained by force at once, but the budget lets one out: the other waits for the slot.
    const page = await eventually(async () => {
      const p = await browser.get('/console/pools/pool-pic-drain');
      return p.html.includes('<rect data-state="waiting-for-budget"') && p.html.includes('held by')
        ? p
        : undefined;
    }, 20_000);
    const gantt = figure(page.html, `pool-drain-gantt" data-operation="${operationId}`);
    expect(count(gantt, /<g class="gantt-row"/g)).toBe(2);
    for (const [i, hostname] of hosts.entries()) {
      expect(gantt).toContain(`<a href="/console/nodes/${ids[i]}"><title>${ids[i]}</title>`);
      expect(gantt).toContain(`>${hostname}</text></a>`);
    }
    expect(gantt).toContain('<rect data-state="drained"');
    expect(gantt).toContain('>now</text>');
    const holder = gantt.includes(`<title>${hosts[0]}: drained since`) ? 0 : 1;
    const waiter = 1 - holder;
    expect(gantt).toContain(`<title>${hosts[waiter]}: waiting for the budget since`);
    expect(page.html).toContain(
      `${hosts[waiter]} waits for a slot in the pool&#39;s disruption budget: 1 of 1 nodes out, held by ` +
        `${hosts[holder]} (drained, still cordoned). To let the next go: uncordon it`,
    );
    expect(page.html).toContain(
      'raise the pool&#39;s maxUnavailable (at most 1 out now), or cancel the pool drain.',
    );
    // The region re-reads itself while the drain runs: its bars and its line at now move.
    expect(page.html).toContain('id="live-pool-drain" data-live="" data-live-busy=""');
    // The operation's own page draws it too.
    const own = await browser.get(`/console/operations/${operationId}`);
    expect(count(figure(own.html, 'pool-drain-gantt'), /<g class="gantt-row"/g)).toBe(2);

    await call(h, 'DELETE', `/v1/operations/${operationId}`, { body: { children: 'cancel' } });
    const ended = await eventually(async () => {
      const p = await browser.get('/console/pools/pool-pic-drain');
      return p.html.includes('No pool drain is running.') ? p : undefined;
    });
    expect(ended.html).toContain('id="live-pool-drain" data-live="">');
  });
});
