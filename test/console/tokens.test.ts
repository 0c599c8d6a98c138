import { describe, expect, it } from 'vitest';
import { join } from '../support/agents';
import { call, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { badge, type Browser, csrfOf, flashOf, useConsole, signedIn as signedInAs } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

const tokensOf = async (poolId: string) =>
  (
    (await call(h, 'GET', '/v1/tokens')).body.items as {
      id: string;
      poolId: string;
      revokedAt: string | null;
    }[]
  ).filter((t) => t.poolId === poolId);
const JOIN_LINE = /drydock-agent join --api (\S+) --token (\S+) --data-dir \/var\/lib\/drydock/;

const signedIn = (key: string) => signedInAs(server.base, key);

/** Creates a token from the tokens page's form; the page the creation returns to. */
async function create(browser: Browser, fields: Record<string, string>) {
  const page = await browser.get('/console/tokens');
  expect(page.html).toContain('action="/console/tokens"');
  const done = await browser.post('/console/tokens', { csrf: csrfOf(page), ...fields });
  expect(done.status).toBe(303);
  // The secret is never in a URL.
  expect(done.location).toBe('/console/tokens');
  return browser.get(done.location!);
}

describe('join tokens page', () => {
  it('create shows the secret once, in the join line; a reload does not show it again', async () => {
    await seedPool(h, { id: 'pool-tok-make' });
    const browser = await signedIn(h.operatorKey);
    const shown = await create(browser, {
      poolId: 'pool-tok-make',
      ttl: '2h',
      maxUses: '3',
      labels: 'rack=b7,row=3',
      description: 'rack b7 rebuild',
    });
    expect(flashOf(shown)?.[0]).toBe('ok');
    const [token] = await tokensOf('pool-tok-make');
    expect(token).toMatchObject({
      labels: { rack: 'b7', row: '3' },
      maxUses: 3,
      description: 'rack b7 rebuild',
    });
    const line = JOIN_LINE.exec(shown.html);
    expect(line?.[1]).toBe(server.base);
    const secret = line![2]!;
    expect(shown.html).toContain(`<code class="token-secret">${secret}</code>`);

    // The secret in the line is the token's: a machine joins with it into the pool, with its labels.
    const joined = await join(h, { token: secret, hostname: 'tok-joined-1' });
    expect(joined.status).toBe(201);
    const node = (await call(h, 'GET', `/v1/nodes/${joined.body.nodeId}`)).body;
    expect(node).toMatchObject({ poolId: 'pool-tok-make', provisionState: 'adopted' });

    // Reloading: listed with its uses, the secret gone.
    const again = await browser.get('/console/tokens');
    expect(again.html).toContain(token!.id);
    expect(again.html).toContain('1 of 3 (2 left)');
    expect(again.html).not.toContain(secret);
    expect(again.html).not.toMatch(JOIN_LINE);
    expect(flashOf(again)).toBeUndefined();
  });

  it("the API's refusals show in the flash; nothing is created", async () => {
    await seedPool(h, { id: 'pool-tok-bad' });
    const browser = await signedIn(h.operatorKey);
    const tries: [Record<string, string>, RegExp][] = [
      [{ poolId: 'pool-tok-bad', ttl: 'soon', maxUses: '1' }, /^Create token refused: .+ \(INVALID_INPUT\)$/],
      [
        { poolId: 'pool-tok-bad', ttl: '1h', maxUses: 'lots' },
        /^Create token refused: .+ \(INVALID_INPUT\)$/,
      ],
      [{ poolId: 'no-such-pool', ttl: '1h', maxUses: '1' }, /^Create token refused: .+ \(NOT_FOUND\)$/],
      [
        { poolId: 'pool-tok-bad', ttl: '1h', maxUses: '1', labels: 'rack' },
        /^Create token refused: labels .+\.$/,
      ],
    ];
    for (const [fields, refusal] of tries) {
      const page = await create(browser, fields);
      expect(flashOf(page)?.[0], JSON.stringify(fields)).toBe('error');
      expect(flashOf(page)?.[1]).toMatch(refusal);
      expect(page.html).not.toMatch(JOIN_LINE);
    }
    expect(await tokensOf('pool-tok-bad')).toHaveLength(0);
  });

  it('revoke asks for confirmation; revoked, the token no longer joins', async () => {
    await seedPool(h, { id: 'pool-tok-revoke' });
    const browser = await signedIn(h.operatorKey);
    const shown = await create(browser, { poolId: 'pool-tok-revoke', ttl: '1h', maxUses: '0' });
    const secret = JOIN_LINE.exec(shown.html)![2]!;
    const [token] = await tokensOf('pool-tok-revoke');
    expect(shown.html).toContain(`action="/console/tokens/${token!.id}/revoke"`);

    // Without the box ticked: refused by the console, the token still usable.
    let done = await browser.post(`/console/tokens/${token!.id}/revoke`, { csrf: csrfOf(shown) });
    let page = await browser.get(done.location!);
    expect(flashOf(page)).toEqual(['error', `Token ${token!.id} not revoked: tick the box to confirm.`]);
    expect((await tokensOf('pool-tok-revoke'))[0]!.revokedAt).toBeNull();

    done = await browser.post(`/console/tokens/${token!.id}/revoke`, { csrf: csrfOf(shown), confirm: 'yes' });
    page = await browser.get(done.location!);
    expect(flashOf(page)?.[0]).toBe('ok');
    expect((await tokensOf('pool-tok-revoke'))[0]!.revokedAt).not.toBeNull();
    expect(page.html).toMatch(new RegExp(`${badge('token', 'revoked').source} <time datetime=`));
    expect(page.html).not.toContain(`action="/console/tokens/${token!.id}/revoke"`);
    const refused = await join(h, { token: secret });
    expect(refused.status).toBe(401);
  });

  it('without its CSRF token, create and revoke are 403 and change nothing', async () => {
    await seedPool(h, { id: 'pool-tok-csrf' });
    const browser = await signedIn(h.operatorKey);
    const created = await create(browser, { poolId: 'pool-tok-csrf', ttl: '1h', maxUses: '1' });
    expect(flashOf(created)?.[0]).toBe('ok');
    const [token] = await tokensOf('pool-tok-csrf');
    const make = await browser.post('/console/tokens', { poolId: 'pool-tok-csrf', ttl: '1h', maxUses: '1' });
    expect(make.status).toBe(403);
    const revoke = await browser.post(`/console/tokens/${token!.id}/revoke`, {
      csrf: 'wrong',
      confirm: 'yes',
    });
    expect(revoke.status).toBe(403);
    expect(await tokensOf('pool-tok-csrf')).toMatchObject([{ id: token!.id, revokedAt: null }]);
    // A token id of the wrong shape is the 404 page.
    const page = await browser.get('/console/tokens');
    expect(
      (await browser.post('/console/tokens/jt_nope/revoke', { csrf: csrfOf(page), confirm: 'yes' })).status,
    ).toBe(404);
  });

  it('a tenant key without the tokens actions gets no nav link and no forms; with them, only its own pools', async () => {
    await seedPool(h, { id: 'pool-tok-own', tenantId: 'tok-initech' });
    await seedPool(h, { id: 'pool-tok-granted', tenantId: 'tok-other', grants: ['tok-initech'] });
    const reader = await tenantKey(h, 'tok-initech', ['compute:nodes:read'], 'tok-reader');
    const browser = await signedIn(reader.secret);
    const fleet = await browser.get('/console');
    expect(fleet.html).not.toContain('href="/console/tokens"');
    const page = await browser.get('/console/tokens');
    expect(page.status).toBe(403);
    expect(page.html).toContain('(FORBIDDEN)');
    expect(page.html).not.toContain('action="/console/tokens"');

    const manager = await tenantKey(
      h,
      'tok-initech',
      ['compute:nodes:read', 'compute:tokens:read', 'compute:tokens:write'],
      'tok-manager',
    );
    const managing = await signedIn(manager.secret);
    const own = await managing.get('/console/tokens');
    expect(own.html).toContain('href="/console/tokens"');
    expect(own.html).toContain('<option value="pool-tok-own">');
    // A granted pool is another tenant's: its tokens are not this key's to make.
    expect(own.html).not.toContain('<option value="pool-tok-granted">');
    const shown = await create(managing, { poolId: 'pool-tok-own', ttl: '1h', maxUses: '1' });
    expect(flashOf(shown)?.[0]).toBe('ok');
    expect(shown.html).toMatch(JOIN_LINE);
    expect(await tokensOf('pool-tok-own')).toHaveLength(1);
    // The reader still sees none of it.
    expect((await browser.get('/console/tokens')).html).not.toContain('pool-tok-own');
  });
});
