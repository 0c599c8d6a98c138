import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { allocations } from '../../db/schema';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useConsole, signedIn } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

/** The page's section of one scheduler. */
function section(html: string, source: string): string {
  const start = html.indexOf(`<section class="scheduler" data-source="${source}">`);
  expect(start, `no section of ${source}`).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

/** Work a Slurm bridge recorded on the node, its end asked by a drain (set here: no drain runs). */
async function job(nodeId: string, externalId: string, asked: boolean): Promise<string> {
  const reply = await call(h, 'POST', '/v1/allocations', {
    body: { nodeId, tenantId: 'acme', kind: 'job', source: 'slurm:hpc1', externalId },
  });
  expect(reply.status).toBe(201);
  const id = reply.body.id as string;
  if (asked) await h.db.update(allocations).set({ endRequestedAt: new Date() }).where(eq(allocations.id, id));
  return id;
}

describe('node page: what its schedulers say', () => {
  it("shows each scheduler's state, reason, whose cordon, the disagreement highlighted and escaped, and its live work with the answers", async () => {
    await seedPool(h, { id: 'pool-csched', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-csched', hostname: 'csched-gpu' });
    const browser = await signedIn(server.base, h.operatorKey);
    expect((await browser.get(`/console/nodes/${nodeId}`)).html).toContain(
      'No scheduler reports on this node.',
    );

    const put = (source: string, body: object) =>
      call(h, 'PUT', `/v1/nodes/${nodeId}/schedulers/${source}`, { body });
    expect(
      (
        await put('slurm:hpc1', {
          name: 'gpu-17',
          state: 'mixed+drain',
          reason: 'bad fan <b>now</b>',
          cordoned: true,
          cordonedByDrydock: false,
          down: false,
          disagreement: "Slurm drained by an administrator: 'bad fan'; <script>alert(1)</script>",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await put('slurm:hpc2', {
          name: 'n17',
          state: 'idle+drain',
          reason: 'drydock: cordoned',
          cordoned: true,
          cordonedByDrydock: true,
          down: false,
          disagreement: null,
        })
      ).status,
    ).toBe(200);
    const answered = await job(nodeId, '4711', true);
    await job(nodeId, '4712', true);
    await job(nodeId, '4713', false);
    expect(
      (
        await call(h, 'POST', `/v1/allocations/${answered}/ending`, {
          body: { action: 'requeue', answer: 'requeued' },
        })
      ).status,
    ).toBe(200);

    const page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.status).toBe(200);
    // Its own live region: a new report or answer shows without a reload.
    expect(page.html).toContain('id="live-schedulers" data-live=""');
    const hpc1 = section(page.html, 'slurm:hpc1');
    expect(hpc1).toContain('<code>slurm:hpc1</code> <span class="muted">as gpu-17</span>');
    expect(hpc1).toContain('<dd>mixed+drain</dd>');
    expect(hpc1).toContain('<dd>bad fan &lt;b&gt;now&lt;/b&gt;</dd>');
    expect(hpc1).toContain('<dd data-cordon="">yes, not by Drydock</dd>');
    expect(hpc1).toContain(
      '<p class="disagreement" data-disagreement="">Disagrees with Drydock: Slurm drained by an administrator: &#39;bad fan&#39;; &lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
    expect(page.html).not.toContain('<script>alert(1)');
    const rows = [...hpc1.matchAll(/<tr><td><code>(\d+)<\/code><\/td>(.*?)<\/tr>/g)].map(([, id, cells]) => [
      id,
      cells,
    ]);
    expect(rows.map(([id]) => id)).toEqual(['4711', '4712', '4713']);
    expect(rows[0]![1]).toMatch(
      /<td>acme<\/td><td>open-ended<\/td><td><time datetime="\d{4}-[^"]+Z"[^>]*>[^<]+<\/time><\/td><td>requeue: requeued \(<time datetime="\d{4}-[^"]+Z"[^>]*>[^<]+<\/time>\)<\/td>/,
    );
    expect(rows[1]![1]).toContain('<td>no answer yet</td>');
    expect(rows[2]![1]).toContain('<td>—</td><td>—</td>');

    const hpc2 = section(page.html, 'slurm:hpc2');
    expect(hpc2).toContain(`<dd data-cordon="">yes, Drydock&#39;s cordon</dd>`);
    expect(hpc2).not.toContain('disagreement');
    expect(hpc2).toContain('No live work of slurm:hpc2 on this node.');
  });

  it("a tenant key that reads the node sees its schedulers' view (and only its own tenant's work)", async () => {
    await seedPool(h, { id: 'pool-csched-t', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-csched-t' });
    await call(h, 'PUT', `/v1/nodes/${nodeId}/schedulers/slurm:hpc1`, {
      body: {
        name: 'gpu-18',
        state: 'down*',
        reason: 'Not responding',
        cordoned: false,
        cordonedByDrydock: false,
        down: true,
        disagreement: null,
      },
    });
    const reader = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-csched-reader');
    const page = await (await signedIn(server.base, reader.secret)).get(`/console/nodes/${nodeId}`);
    const hpc1 = section(page.html, 'slurm:hpc1');
    expect(hpc1).toContain('<dd>down*</dd>');
    expect(hpc1).toContain('yes: the scheduler marks it down (condition SchedulerNodeDown)');
    // The condition it set, as the conditions table says who set it.
    expect(page.html).toContain('<td>slurm:hpc1: Not responding</td>');
    expect(page.html).toContain('<td>scheduler</td>');
  });
});
