import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleOidcSettings } from '../../console/oidc';
import {
  startOidcProvider,
  type ProviderPerson,
  type RunningOidcProvider,
} from '../../scripts/services/oidc-provider';
import { freePort } from '../../scripts/services/process';
import { screenshot, useBrowser } from '../support/browser';
import { eventsOf, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { trusting } from '../support/oidc';
import { Browser, useConsole } from '../console/console-client';

/** alice an operator, bob acme's, carol in no mapped group, dave an operator until his group goes. */
const PEOPLE: ProviderPerson[] = [
  { email: 'alice@example.com', name: 'Alice', groups: ['drydock-operators'] },
  { email: 'bob@example.com', name: 'Bob', groups: ['ml-team'] },
  { email: 'carol@example.com', name: 'Carol', groups: ['contractors', 'vpn-users'] },
  { email: 'dave@example.com', name: 'Dave', groups: ['drydock-operators'] },
];
const PROVIDER_NAME = 'Test IdP';

let provider: RunningOidcProvider;
/** The console's port, chosen before the provider starts: its client's redirect URIs name it. */
let port: number;
// The console is served as `localhost` and the provider as `127.0.0.1`: two sites, as in
// production, so the browser's SameSite rules apply to the redirects between them.
const consoleUrl = (path: string) => `http://localhost:${port}${path}`;

beforeAll(async () => {
  port = await freePort();
  provider = await startOidcProvider({
    people: PEOPLE,
    redirectUris: [consoleUrl('/console/oidc/callback')],
    postLogoutRedirectUris: [consoleUrl('/console/sign-in')],
    // Short: the console refreshes a session's token (and checks the person again) within seconds.
    accessTokenTtlSeconds: 2,
    // Each refresh spends its refresh token; a second use of one revokes the grant.
    rotateRefreshTokens: true,
  });
});
afterAll(async () => {
  await provider?.stop();
});

const h = useHarness({
  worker: false,
  oidc: () => trusting(provider),
});
const settings = (): ConsoleOidcSettings => ({
  issuer: provider.issuer,
  clientId: provider.consoleClient.clientId,
  clientSecret: provider.consoleClient.clientSecret,
  redirectUrl: consoleUrl('/console/oidc/callback'),
  postLogoutRedirectUrl: consoleUrl('/console/sign-in'),
  scopes: 'openid email profile groups',
  resource: provider.resource,
  providerName: PROVIDER_NAME,
});
const server = useConsole(h, {
  port: () => port,
  host: 'localhost',
  signIn: () => ({ keySignIn: true, oidc: settings() }),
});
/** A console of the same API with key sign-in turned off. */
const keyless = useConsole(h, { signIn: () => ({ keySignIn: false, oidc: settings() }) });
const b = useBrowser();

describe('console sign-in at an OpenID provider, in a browser', () => {
  it('signs an operator in through the provider; what they do names them', async () => {
    await seedPool(h, { id: 'pool-oidc-ops' });
    const nodeId = await seedNode(h, { poolId: 'pool-oidc-ops', hostname: 'gpu-oidc-01' });
    const page = b.page;

    await page.goto(server.base + '/console');
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).waitFor();
    // Break-glass key sign-in stays on beside it.
    expect(await page.getByLabel('API key').count()).toBe(1);
    await screenshot(page, 'console-oidc-sign-in');

    await signInAt(page, 'alice@example.com');
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    expect(await page.locator('.caller').textContent()).toBe('alice@example.com (operator)');
    const cookies = await consoleCookies(page.context());
    expect(cookies.map((cookie) => cookie.name)).toEqual(['drydock_session']);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });

    // Cordon's page, from the node page's Actions menu.
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.getByText('Actions', { exact: true }).click();
    await page.getByRole('link', { name: 'Cordon…' }).click();
    const cordonForm = page.locator('form.confirm');
    await cordonForm.getByLabel('Reason').fill('fan swap');
    await cordonForm.getByRole('button', { name: /^Cordon / }).click();
    await page.getByText('gpu-oidc-01 cordoned.').waitFor();
    await screenshot(page, 'console-oidc-node');
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toMatchObject([
      { actor: 'user:alice@example.com', reason: 'fan swap' },
    ]);
    // Only the provider's own development pages asked for anything elsewhere (a web font).
    expect(b.blocked.filter((url) => !url.startsWith('https://fonts.googleapis.com/'))).toEqual([]);
  });

  it("signs a tenant's member in: only acme's nodes, no operator pages", async () => {
    await seedPool(h, { id: 'pool-oidc-acme', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-oidc-other', tenantId: 'other' });
    await seedNode(h, { poolId: 'pool-oidc-acme', tenantId: 'acme', hostname: 'gpu-acme-01' });
    await seedNode(h, { poolId: 'pool-oidc-other', tenantId: 'other', hostname: 'gpu-other-01' });
    const page = b.page;
    await signedIn(page, 'bob@example.com');
    expect(await page.locator('.caller').textContent()).toBe('bob@example.com (tenant acme)');
    expect(await page.getByRole('link', { name: 'gpu-acme-01' }).count()).toBe(1);
    expect(await page.getByText('gpu-other-01').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Audit' }).count()).toBe(0);
    const audit = await page.goto(`${server.base}/console/audit`);
    expect(audit?.status()).toBe(403);
  });

  it('refuses a person in no mapped group: who they are, their groups, no session', async () => {
    const page = b.page;
    await page.goto(server.base + '/console');
    await signInAt(page, 'carol@example.com');
    await page.getByRole('heading', { name: 'Drydock does not let you in' }).waitFor();
    const text = await page.locator('main').textContent();
    expect(text).toContain(`You are signed in at ${PROVIDER_NAME} as carol@example.com`);
    expect(text).toContain('Your groups: contractors, vpn-users');
    expect(text).toContain('Ask an administrator to add you to a group mapped in Drydock');
    await screenshot(page, 'console-oidc-refused');
    expect(await consoleCookies(page.context())).toEqual([]);

    // Signing out of the provider from there comes back to the sign-in page; nothing was opened.
    await page.getByRole('link', { name: `Sign out of ${PROVIDER_NAME}` }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect((await page.goto(`${server.base}/console`))?.url()).toBe(`${server.base}/console/sign-in`);
  });

  it('refuses a person at the next refresh once their group is removed at the provider', async () => {
    const page = b.page;
    // The page loads below, not the pages' background live requests, are to meet the refusal.
    await page.route('**/console/live?**', (route) => route.abort());
    await signedIn(page, 'dave@example.com');
    const dave = provider.people.find((person) => person.email === 'dave@example.com')!;
    dave.groups = ['former-operators'];
    // The access token lives 2 s: a page load soon refreshes it, and the API checks dave again.
    await eventually(async () => {
      await page.goto(`${server.base}/console`);
      return page.getByRole('heading', { name: 'Drydock does not let you in' }).isVisible();
    }, 20_000);
    expect(await page.locator('main').textContent()).toContain('Your groups: former-operators');
    // The session cookie gone; why it ended kept for the sign-in page, which says it once.
    expect(await consoleCookies(page.context())).toEqual([
      expect.objectContaining({ name: 'drydock_ended', value: 'refused' }),
    ]);
    expect((await page.goto(`${server.base}/console`))?.url()).toBe(`${server.base}/console/sign-in`);
    await page.getByText('Drydock no longer lets you in').waitFor();
    expect(await consoleCookies(page.context())).toEqual([]);
  });

  it('ends the session when the provider refuses its refresh (signed out at the provider)', async () => {
    const page = b.page;
    // The page loads below are to meet the refusal, not the pages' background live reads: a live
    // read that meets it sets the reason's cookie (the keyless test below), but one the next page
    // load cancels mid-renewal never delivers it.
    await page.route('**/console/live?**', (route) => route.abort());
    await signedIn(page, 'bob@example.com');
    // Signing out at the provider itself revokes the console's grant (it has no offline_access).
    const atProvider = await page.context().newPage();
    await atProvider.goto(`${provider.issuer}/session/end`);
    await atProvider.getByRole('button', { name: 'Yes, sign me out' }).click();
    await atProvider.waitForURL((url) => url.pathname.endsWith('/session/end/success'));
    await eventually(async () => {
      await page.goto(`${server.base}/console/pools`);
      return new URL(page.url()).pathname === '/console/sign-in';
    }, 20_000);
    await page.getByText('Your sign-in at the provider could not be renewed').waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/console/pools');
    expect(await consoleCookies(page.context())).toEqual([]);
  });

  it('renews a session once at a time across consoles, though the provider rotates refresh tokens', async () => {
    const page = b.page;
    await signedIn(page, 'alice@example.com');
    const [session] = await consoleCookies(page.context());
    const cookie = `drydock_session=${session!.value}`;
    // Bursts of page reads through two consoles (two API apps over one sessions table) for three
    // token lifetimes: each renewal falls due in several requests at once. Were two to refresh
    // with one refresh token, the provider would revoke the grant and the session would end.
    const started = Date.now();
    let bursts = 0;
    while (Date.now() - started < 6_000) {
      const answers = await Promise.all(
        [server.base, keyless.base, server.base, keyless.base].map(async (base) => {
          const answer = await fetch(`${base}/console/pools`, { headers: { cookie }, redirect: 'manual' });
          return answer.status;
        }),
      );
      expect(answers).toEqual([200, 200, 200, 200]);
      bursts++;
    }
    expect(bursts).toBeGreaterThan(3);
    await page.goto(`${server.base}/console`);
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
  });

  it('keeps a deep link through the sign-in', async () => {
    await seedPool(h, { id: 'pool-oidc-deep' });
    const nodeId = await seedNode(h, { poolId: 'pool-oidc-deep', hostname: 'gpu-deep-01' });
    const page = b.page;
    await page.goto(`${server.base}/console/nodes/${nodeId}?types=node.`);
    expect(new URL(page.url()).searchParams.get('next')).toBe(`/console/nodes/${nodeId}?types=node.`);
    await signInAt(page, 'alice@example.com');
    await page.getByRole('heading', { name: /gpu-deep-01/ }).waitFor();
    expect(page.url()).toBe(`${server.base}/console/nodes/${nodeId}?types=node.`);
  });

  it('signs out: the session ends on the server and at the provider', async () => {
    const page = b.page;
    await signedIn(page, 'alice@example.com');
    const [session] = await consoleCookies(page.context());
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Drydock's session ends, then the provider asks to confirm its own logout.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    const replay = await fetch(`${server.base}/console`, {
      headers: { cookie: `drydock_session=${session!.value}` },
      redirect: 'manual',
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/console/sign-in');
    // The provider's session ended too: signing in asks for the login again.
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click();
    await page.locator('input[name="login"]').waitFor();
  });

  it('holds CSRF for a person, and refuses a callback with another state or one replayed', async () => {
    await seedPool(h, { id: 'pool-oidc-csrf' });
    const nodeId = await seedNode(h, { poolId: 'pool-oidc-csrf', hostname: 'gpu-csrf-oidc' });
    const page = b.page;
    const callbacks: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/console/oidc/callback')) callbacks.push(request.url());
    });
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await signInAt(page, 'alice@example.com');
    await page.getByRole('heading', { name: /gpu-csrf-oidc/ }).waitFor();
    await page.goto(`${server.base}/console/nodes/${nodeId}/cordon`);
    const cordonForm = page.locator('form.confirm');
    await cordonForm.locator('input[name="csrf"]').evaluate((input) => input.remove());
    await cordonForm.getByRole('button').click();
    await page.getByText("This form's CSRF token is missing or wrong: nothing was changed.").waitFor();
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toEqual([]);

    // The provider's answer, replayed: its flow was used up.
    expect(callbacks).toHaveLength(1);
    const replayed = await page.goto(callbacks[0]!);
    expect(replayed?.status()).toBe(400);
    await page.getByText('its answer was used already').waitFor();

    // A new flow, answered with another flow's state: refused, nothing opened.
    const other = await b.newContext();
    const stranger = await other.newPage();
    await stranger.goto(`${server.base}/console/oidc/start`);
    await stranger.locator('input[name="login"]').waitFor();
    // The flow waits in a cookie for the callback alone, and comes back on a navigation from the provider.
    expect(await consoleCookies(other)).toMatchObject([
      { name: 'drydock_sign_in', path: '/console/oidc/callback', httpOnly: true, sameSite: 'Lax' },
    ]);
    const forged = new URL(callbacks[0]!);
    const answer = await stranger.goto(forged.href);
    expect(answer?.status()).toBe(400);
    await stranger.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    expect(await stranger.locator('main').textContent()).toContain('state');
    await screenshot(stranger, 'console-oidc-state-refused');
    expect((await consoleCookies(other)).map((cookie) => cookie.name)).not.toContain('drydock_session');
  });

  it('with key sign-in off: no key form, a key refused, key sessions ended', async () => {
    const page = b.page;
    await page.goto(`${keyless.base}/console/sign-in`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).waitFor();
    expect(await page.getByLabel('API key').count()).toBe(0);
    await screenshot(page, 'console-oidc-keyless-sign-in');

    const posted = await new Browser(keyless.base).signIn(h.operatorKey);
    expect(posted.status).toBe(403);
    expect(posted.headers.get('set-cookie')).toBeNull();
    expect(posted.html).toContain('Signing in with an API key is turned off');

    // A key session opened where key sign-in was on (the same sessions table) ends here.
    const opened = await new Browser(server.base).signIn(h.operatorKey);
    expect(opened.status).toBe(303);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const ended = await fetch(`${keyless.base}/console`, { headers: { cookie }, redirect: 'manual' });
    expect(ended.status).toBe(303);
    expect(ended.headers.get('location')).toBe('/console/sign-in?ended=key-sign-in-off');

    // Another, whose end a page's background read meets (nobody sees that answer): the browser
    // keeps why, and the sign-in page its next page load reaches says it, once.
    const other = (await new Browser(server.base).signIn(h.operatorKey)).headers.get('set-cookie')!;
    const live = await fetch(`${keyless.base}/console/live?after=0`, {
      headers: { cookie: other.split(';')[0]!, accept: 'application/json' },
      redirect: 'manual',
    });
    expect(live.status).toBe(303);
    const why = live.headers
      .getSetCookie()
      .find((c) => c.startsWith('drydock_ended='))!
      .split(';')[0]!;
    const next = await fetch(`${keyless.base}/console`, { headers: { cookie: why }, redirect: 'manual' });
    expect(next.headers.get('location')).toBe('/console/sign-in');
    const signInPage = await fetch(`${keyless.base}/console/sign-in`, { headers: { cookie: why } });
    expect(await signInPage.text()).toContain('Signing in with an API key is turned off on this console');
    expect(signInPage.headers.get('set-cookie')).toMatch(/^drydock_ended=;/);
  });
});

/**
 * From a console page that offers it: "Sign in with" the provider, its development login page
 * (any password), its consent page, and back to the console.
 */
async function signInAt(page: Page, email: string) {
  if (!new URL(page.url()).pathname.startsWith('/console/sign-in')) {
    throw new Error(`not on the sign-in page: ${page.url()}`);
  }
  await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.locator('input[name="login"]').fill(email);
  await page.locator('input[name="password"]').fill('any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.origin === new URL(server.base).origin);
}

/** Signs `page` in as `email` from the fleet page's sign-in, and waits for the fleet page. */
async function signedIn(page: Page, email: string) {
  await page.goto(`${server.base}/console`);
  await signInAt(page, email);
  await page.getByRole('heading', { name: 'Fleet' }).waitFor();
}

/** The cookies the browser holds for the console (the provider's are 127.0.0.1's). */
async function consoleCookies(context: BrowserContext) {
  return (await context.cookies()).filter((cookie) => cookie.domain === 'localhost');
}
