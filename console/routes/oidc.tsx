import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { ApiError } from '@drydock/client';
import { apiAs, type InProcess } from '../api';
import type { ConsoleEnv } from '../context';
import { landingOf, sessionCookieOf } from '../landing';
import { CALLBACK_PATH, FLOW_TTL_MS, ProviderRefused, ProviderUnreachable, type ConsoleOidc } from '../oidc';
import { RefusedPage, SignedInPage, SignInFailedPage, type Refusal } from '../pages/oidc';
import type { Caller } from '../sessions';
import type { PersonTokens } from '../oidc';

/** The cookie that carries a sign-in flow (state, nonce, PKCE verifier, the page to land on) to the callback. */
const FLOW_COOKIE = 'drydock_sign_in';

/** What the sign-in routes need from the console: the provider, the API, and how to open a session. */
export interface OidcRouteDeps {
  oidc: ConsoleOidc;
  send: InProcess;
  /** Opens the session (its cookie set), ending `earlier`, the browser's session before this sign-in. */
  open(
    c: Context<ConsoleEnv>,
    caller: Caller,
    tokens: PersonTokens,
    earlier: string | undefined,
  ): Promise<void>;
}

/**
 * Sign-in at the OpenID provider (docs/console.md, Signing in): `GET /console/oidc/start` sends
 * the browser to the provider with state, nonce and a PKCE challenge, the flow sealed in a cookie
 * for the callback; `GET /console/oidc/callback` checks the answer (openid-client), asks the API
 * who the person is with their access token, and opens the session — or refuses, opening nothing.
 */
export function oidcRoutes(deps: OidcRouteDeps): Hono<ConsoleEnv> {
  const { oidc } = deps;
  const router = new Hono<ConsoleEnv>();

  router.get('/oidc/start', async (c) => {
    const next = landingOf(c.req.query('next')) ?? '/console';
    const { url, flow } = await oidc.start(next, sessionCookieOf(c));
    setCookie(c, FLOW_COOKIE, flow, {
      httpOnly: true,
      // Lax, not Strict: it must come back on the provider's redirect, a navigation from its site.
      sameSite: 'Lax',
      path: CALLBACK_PATH,
      secure: new URL(oidc.settings.redirectUrl).protocol === 'https:',
      maxAge: FLOW_TTL_MS / 1000,
    });
    return c.redirect(url, 303);
  });

  router.get('/oidc/callback', async (c) => {
    const flow = oidc.openFlow(getCookie(c, FLOW_COOKIE));
    // One use: a replayed callback finds no flow.
    deleteCookie(c, FLOW_COOKIE, { path: CALLBACK_PATH });
    if (!flow) {
      return c.html(
        <SignInFailedPage message="This sign-in was not started in this browser, took longer than 10 minutes, or its answer was used already." />,
        400,
      );
    }
    let finished: Awaited<ReturnType<ConsoleOidc['finish']>>;
    try {
      finished = await oidc.finish(new URL(c.req.url).search, flow);
    } catch (error) {
      if (!(error instanceof ProviderRefused)) throw error;
      return c.html(
        <SignInFailedPage
          message={`The sign-in at ${oidc.settings.providerName} did not check out: ${error.message}.`}
        />,
        400,
      );
    }
    const { tokens, claims } = finished;
    let caller: Caller;
    try {
      // The API's own group mapping decides who the person is in Drydock.
      caller = await apiAs(c, tokens.accessToken, deps.send).GET('/v1/whoami');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      await revokeQuietly(c, oidc, tokens);
      if (error.status === 403) {
        const who = stringOf(claims.email) ?? stringOf(claims.sub) ?? 'someone';
        return c.html(<RefusedPage refusal={await refusalOf(oidc, error, who, tokens.idToken)} />, 403);
      }
      if (error.details.retryAfterSeconds !== undefined)
        c.header('Retry-After', String(error.details.retryAfterSeconds));
      return c.html(
        <SignInFailedPage message={`The API did not accept the provider's access token: ${error.message}`} />,
        error.status === 429 ? 429 : 403,
      );
    }
    await deps.open(c, caller, tokens, flow.earlier);
    return c.html(<SignedInPage who={caller.name} next={flow.next} />);
  });

  return router;
}

/** The refusal page's facts: who, their groups (as the API read them), the API's words, the provider's logout. */
export async function refusalOf(
  oidc: ConsoleOidc,
  error: ApiError,
  who: string,
  idToken: string | undefined,
): Promise<Refusal> {
  // The API lists the groups when none of them is mapped; other refusals (groups of two
  // tenants, a role without compute:nodes:read) say so in its message.
  const groups = Array.isArray(error.details.groups)
    ? error.details.groups.filter((g): g is string => typeof g === 'string')
    : undefined;
  return {
    who,
    groups,
    message: error.message,
    providerName: oidc.settings.providerName,
    signOutUrl: await oidc.endSessionUrl(idToken),
  };
}

/** Revokes the person's refresh token; a provider that fails to is logged, not shown. */
export async function revokeQuietly(c: Context<ConsoleEnv>, oidc: ConsoleOidc, tokens: PersonTokens) {
  await oidc.revoke(tokens).catch((error: unknown) => {
    if (!(error instanceof ProviderRefused || error instanceof ProviderUnreachable)) throw error;
    c.var.deps.log.warn({ err: error }, 'the OpenID provider did not revoke a refresh token');
  });
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
