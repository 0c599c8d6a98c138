import { describe, expect, it } from 'vitest';
import { call, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { csrfOf, flashOf, unescapeHtml, useConsole, signedIn as signedInAs } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

const poolOf = async (id: string) => (await call(h, 'GET', `/v1/pools/${id}`)).body;
const updatesOf = async (poolId: string) =>
  (await call(h, 'GET', '/v1/events?type=pool.updated&limit=100')).body.items.filter(
    (e: { data: { poolId: string } }) => e.data.poolId === poolId,
  );

const signedIn = (key: string) => signedInAs(server.base, key);

/** The pool page's policy form, as a browser would post it unchanged: each field as shown. */
function formOf(html: string): Record<string, string> {
  const form = /<form method="post" action="\/console\/pools\/[^/]+\/update"[\s\S]*?<\/form>/.exec(html)?.[0];
  if (!form) throw new Error('no policy form in the page');
  const fields: Record<string, string> = {};
  for (const [, name, value] of form.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) {
    fields[name!] = unescapeHtml(value!);
  }
  const textarea = /<textarea name="remediation"[^>]*>([\s\S]*?)<\/textarea>/.exec(form);
  fields.remediation = unescapeHtml(textarea?.[1] ?? '');
  return fields;
}

describe('pool page: changing grants and policy', () => {
  it('an operator changes what the form shows; one PATCH at the page’s version, one event', async () => {
    await seedPool(h, {
      id: 'pool-cp1',
      tenantId: 'acme',
      grants: ['globex'],
      policy: { lostAfter: '15m', remediation: { NicFlap: { ladder: ['reset-nic'] } } },
    });
    const browser = await signedIn(h.operatorKey);
    const page = await browser.get('/console/pools/pool-cp1');
    expect(page.html).toContain('Change grants and policy (version 1)');
    const shown = formOf(page.html);
    expect(shown).toMatchObject({
      version: '1',
      grants: 'globex',
      maxUnavailable: '',
      lostAfter: '15m',
      remediation: '{"NicFlap":{"ladder":["reset-nic"]}}',
    });

    // As posted without a change: nothing to change, no event.
    const same = await browser.post('/console/pools/pool-cp1/update', shown);
    expect(flashOf(await browser.get(same.location!))).toEqual(['ok', 'Pool pool-cp1: nothing to change.']);
    expect(await updatesOf('pool-cp1')).toEqual([]);

    const done = await browser.post('/console/pools/pool-cp1/update', {
      ...shown,
      grants: 'globex, initech',
      maxUnavailable: '2',
      maxUnhealthy: '25%',
      lostAfter: '',
      remediation: '{"GpuXidError":{"ladder":["reboot"]}}',
      reason: 'rack b7 roll-out',
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/console/pools/pool-cp1');
    const after = await browser.get(done.location!);
    expect(flashOf(after)).toEqual(['ok', 'Pool pool-cp1 updated: version 2.']);
    expect(await poolOf('pool-cp1')).toMatchObject({
      version: 2,
      grants: ['globex', 'initech'],
      policy: {
        maxUnavailable: 2,
        maxUnhealthy: '25%',
        remediation: { GpuXidError: { ladder: ['reboot'] } },
      },
    });
    const [event, ...more] = await updatesOf('pool-cp1');
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      reason: 'rack b7 roll-out',
      data: {
        after: {
          grants: ['globex', 'initech'],
          policy: {
            maxUnavailable: 2,
            maxUnhealthy: '25%',
            lostAfter: null,
            remediation: { GpuXidError: { ladder: ['reboot'] }, NicFlap: null },
          },
        },
      },
    });
    expect(after.html).toContain('at most 2 nodes unavailable at once');
  });

  it('a form read before another change is refused as CONFLICT; bad values are the refusal; nothing changes', async () => {
    await seedPool(h, { id: 'pool-cp2', tenantId: 'acme' });
    const browser = await signedIn(h.operatorKey);
    const page = await browser.get('/console/pools/pool-cp2');
    await call(h, 'PATCH', '/v1/pools/pool-cp2', { body: { policy: { maxUnavailable: 3 } } });
    const before = await poolOf('pool-cp2');
    const stale = await browser.post('/console/pools/pool-cp2/update', {
      ...formOf(page.html),
      lostAfter: '1h',
    });
    expect(flashOf(await browser.get(stale.location!))).toEqual([
      'error',
      'Pool update refused: pool changed since version 1 (now 2) (CONFLICT)',
    ]);
    const fresh = formOf((await browser.get('/console/pools/pool-cp2')).html);
    for (const [fields, said] of [
      [{ maxUnhealthy: 'lots' }, /^Pool update refused: .+ \(INVALID_INPUT\)$/],
      [{ lostAfter: '31d' }, /^Pool update refused: .+ \(INVALID_INPUT\)$/],
      [{ grants: 'Not A Tenant' }, /^Pool update refused: .+ \(INVALID_INPUT\)$/],
      [
        { remediation: '{"GpuXidError":' },
        /^Pool update refused: remediation is not JSON; nothing was sent\.$/,
      ],
      [{ remediation: '[]' }, /^Pool update refused: remediation is a JSON object/],
    ] as const) {
      const done = await browser.post('/console/pools/pool-cp2/update', { ...fresh, ...fields });
      expect(flashOf(await browser.get(done.location!))?.[1], JSON.stringify(fields)).toMatch(said);
    }
    expect(await poolOf('pool-cp2')).toEqual(before);
  });

  it('no form for a tenant key; its POST anyway is FORBIDDEN, and one without CSRF 403: nothing changes', async () => {
    await seedPool(h, { id: 'pool-cp3', tenantId: 'acme' });
    const key = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:update'], 'acme-console');
    const tenant = await signedIn(key.secret);
    const page = await tenant.get('/console/pools/pool-cp3');
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('/update"');
    const done = await tenant.post('/console/pools/pool-cp3/update', {
      csrf: csrfOf(page),
      version: '1',
      maxUnavailable: '50',
    });
    expect(flashOf(await tenant.get(done.location!))).toEqual([
      'error',
      expect.stringMatching(/^Pool update refused: .+ \(FORBIDDEN\)$/),
    ]);
    const operator = await signedIn(h.operatorKey);
    const forged = await operator.post('/console/pools/pool-cp3/update', {
      version: '1',
      maxUnavailable: '50',
    });
    expect(forged.status).toBe(403);
    expect((await poolOf('pool-cp3')).version).toBe(1);
    expect(await updatesOf('pool-cp3')).toEqual([]);
  });
});
