import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { ApiError, Unreachable } from '@drydock/client';
import { apiAs, type InProcess } from './api';
import { CONSOLE_PATH as PATH, notFound, type ConsoleEnv, type Ctx } from './context';
import { sessionFor } from './live';
import { Problem } from './layout';
import {
  ConsoleOidc,
  KEY_SIGN_IN_ONLY,
  ProviderRefused,
  ProviderUnreachable,
  type ConsoleSignInSettings,
} from './oidc';
import { RefusedPage, SignedOutPage } from './pages/oidc';
import { SignInPage, type SignInOptions } from './pages/sign-in';
import { oidcRoutes, refusalOf, revokeQuietly } from './routes/oidc';
import { commandRoutes } from './routes/commands';
import { sshRoutes } from './routes/ssh';
import { fleetRoutes } from './routes/fleet';
import { liveRoutes } from './routes/live';
import { nodeRoutes } from './routes/nodes';
import { operationRoutes } from './routes/operations';
import { auditRoutes } from './routes/audit';
import { poolRoutes } from './routes/pools';
import { tokenRoutes } from './routes/tokens';
import { securityHeaders } from './security';
import { csrfMatches, Sessions, type Caller, type Session, type SessionStore } from './sessions';
import type { PersonTokens } from './oidc';
import { STYLESHEET } from './style';

const COOKIE = 'drydock_session';

/** How a renewal went, besides the session kept: ended by the provider, refused by the API, or failed after the refresh. */
type Renewal =
  undefined | { ended: true } | { refused: ApiError; idToken: string | undefined } | { error: unknown };

/** How long a request whose token has expired waits for another request's renewal of it. */
const RENEWAL_WAIT_MS = 15_000;

/** Why the sign-in page is shown, by its `ended` parameter: fixed words, never the URL's. */
const ENDED = {
  refresh: 'Your sign-in at the provider could not be renewed (it ended there): sign in again.',
  'key-sign-in-off': 'Signing in with an API key is turned off on this console: sign in again.',
};
const endedOf = (why: string | undefined) =>
  why !== undefined && Object.hasOwn(ENDED, why) ? ENDED[why as keyof typeof ENDED] : undefined;

/**
 * The admin console under /console (docs/console.md): server-rendered pages over the API, called
 * in-process through the shared typed client as the signed-in key or person. `send` hands a
 * request to the API app; `store` keeps the sessions; `signIn` says how people sign in.
 */
export function consoleRoutes(
  send: InProcess,
  store: SessionStore,
  signIn: ConsoleSignInSettings = KEY_SIGN_IN_ONLY,
): Hono<ConsoleEnv> {
  const sessions = new Sessions(store);
  const oidc = signIn.oidc ? new ConsoleOidc(signIn.oidc) : undefined;
  const options: SignInOptions = { keySignIn: signIn.keySignIn, providerName: oidc?.settings.providerName };
  const router = new Hono<ConsoleEnv>();

  /** Opens a session and sets its cookie; the browser's earlier session, if any, ends. */
  async function open(
    c: Ctx,
    key: string,
    caller: Caller,
    earlier: string | undefined,
    person?: PersonTokens,
  ) {
    if (earlier) await sessions.close(earlier);
    const session = await sessions.open(key, caller, Date.now(), person);
    setCookie(c, COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: PATH,
      secure: new URL(c.req.url).protocol === 'https:',
    });
  }

  /** The session is over: its row goes, the browser forgets the cookie. */
  async function end(c: Ctx, session: Session) {
    await sessions.close(session.id);
    deleteCookie(c, COOKIE, { path: PATH });
  }

  router.use('*', securityHeaders);
  router.onError((error, c) => failure(c as Ctx, sessions, error));
  router.get('/assets/console.css', (c) =>
    c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' }),
  );

  router.get('/sign-in', (c) =>
    c.html(
      <SignInPage
        options={options}
        next={landingOf(c.req.query('next'))}
        problem={endedOf(c.req.query('ended'))}
      />,
    ),
  );
  router.post('/sign-in', sameOrigin, async (c) => {
    const form = await c.req.parseBody();
    const next = landingOf(typeof form.next === 'string' ? form.next : undefined);
    if (!signIn.keySignIn) {
      return c.html(
        <SignInPage
          options={options}
          next={next}
          problem="Signing in with an API key is turned off on this console: nothing was opened."
        />,
        403,
      );
    }
    const key = typeof form.key === 'string' ? form.key.trim() : '';
    try {
      const caller = await apiAs(c, key, send).GET('/v1/whoami');
      // A browser signing in again leaves its earlier session behind, ended.
      await open(c, key, caller, getCookie(c, COOKIE));
      return c.redirect(next ?? PATH, 303);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Not 401: the API counted this failed authentication once already (per-address limits);
      // a 401 of the console's own would count it again.
      const problem =
        error.status === 401
          ? 'That key is unknown or revoked.'
          : `The API refused that key: ${error.message}`;
      if (error.details.retryAfterSeconds !== undefined)
        c.header('Retry-After', String(error.details.retryAfterSeconds));
      return c.html(
        <SignInPage options={options} next={next} problem={problem} />,
        error.status === 429 ? 429 : 403,
      );
    }
  });
  if (oidc) {
    router.route(
      '/',
      oidcRoutes({
        oidc,
        send,
        open: (c, caller, tokens, earlier) => open(c, tokens.accessToken, caller, earlier, tokens),
        landingOf,
        sessionCookie: (c) => getCookie(c, COOKIE),
      }),
    );
  }

  /**
   * A person's session whose access token is near its end, renewed with the refresh token and
   * the person checked again by the API (their groups may have changed at the provider). Answers
   * the session to go on with, or the page that ends it: refused (no mapped group any more), or
   * signed out (the provider refused the refresh).
   */
  async function renewed(c: Ctx, session: Session): Promise<Session | Response> {
    const provider = oidc!;
    const waitUntil = Date.now() + RENEWAL_WAIT_MS;
    for (;;) {
      const done = await renewOnce(c, provider, session);
      if (done !== 'busy') return done;
      // Another request renews it: this one goes on with the token it has while that is valid,
      // else waits for the renewed one (the next try finds it and keeps it).
      if (Date.now() < session.person!.accessExpiresAt) return session;
      if (Date.now() > waitUntil) {
        throw new ProviderUnreachable('the session is being renewed and the renewal takes too long');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function renewOnce(
    c: Ctx,
    provider: ConsoleOidc,
    session: Session,
  ): Promise<Session | Response | 'busy'> {
    const done = await sessions.renew<Renewal>(session, async (current) => {
      const tokens = current.person!;
      // Another request renewed it since this one read the session: go on with what it got.
      if (!provider.refreshDue(tokens)) return { keep: current, outcome: undefined };
      let fresh: PersonTokens;
      try {
        fresh = await provider.refresh(tokens);
      } catch (error) {
        if (error instanceof ProviderRefused) return { keep: null, outcome: { ended: true } };
        // The provider away: the token it has is good until it expires.
        if (error instanceof ProviderUnreachable && Date.now() < tokens.accessExpiresAt) {
          return { keep: current, outcome: undefined };
        }
        throw error;
      }
      try {
        const caller = await apiAs(c, fresh.accessToken, send).GET('/v1/whoami');
        return { keep: { ...current, key: fresh.accessToken, person: fresh, caller }, outcome: undefined };
      } catch (error) {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          await revokeQuietly(c, provider, fresh);
          return { keep: null, outcome: { refused: error, idToken: fresh.idToken } };
        }
        // Kept: the provider may have rotated the refresh token, the old one is spent.
        return { keep: { ...current, key: fresh.accessToken, person: fresh }, outcome: { error } };
      }
    });
    if (done === 'busy') return done;
    if (!done) return signInAgain(c);
    const { outcome } = done;
    if (outcome && 'error' in outcome) throw outcome.error;
    if (outcome && 'refused' in outcome) {
      deleteCookie(c, COOKIE, { path: PATH });
      const refusal = await refusalOf(provider, outcome.refused, session.caller.name, outcome.idToken);
      return c.html(<RefusedPage refusal={refusal} />, 403);
    }
    if (outcome && 'ended' in outcome) {
      deleteCookie(c, COOKIE, { path: PATH });
      return signInAgain(c, 'refresh');
    }
    return done.session!;
  }

  // Everything below needs a session; every POST below needs its CSRF token too.
  router.use('*', sameOrigin, async (c, next) => {
    let session = await sessions.find(getCookie(c, COOKIE));
    if (session && !session.person && !signIn.keySignIn) {
      // Key sign-in turned off: the key sessions opened before end too.
      await end(c, session);
      return signInAgain(c, 'key-sign-in-off');
    }
    if (session?.person) {
      if (!oidc) {
        // The provider is no longer configured: nobody can renew this session.
        await end(c, session);
        return signInAgain(c);
      }
      if (oidc.refreshDue(session.person)) {
        const renewal = await renewed(c, session);
        if (renewal instanceof Response) return renewal;
        session = renewal;
      }
    }
    if (!session) return signInAgain(c);
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody();
      if (!csrfMatches(session, form.csrf)) {
        return c.html(
          <Problem
            title="Refused"
            message="This form's CSRF token is missing or wrong: nothing was changed."
          />,
          403,
        );
      }
      c.set('form', form);
    }
    c.set('session', sessionFor(c, session));
    c.set('api', apiAs(c, session.key, send));
    const { flash, created } = session;
    await next();
    // A change left something to show once, or a page showed it: the next request may reach
    // another process.
    if (session.flash !== flash || session.created !== created) await sessions.saveShownOnce(session);
  });

  router.post('/sign-out', async (c) => {
    const { session } = c.var;
    await end(c, session);
    if (session.person && oidc) {
      await revokeQuietly(c, oidc, session.person);
      // The provider's own session too (RP-initiated logout), back to the sign-in page. A page
      // that moves on, not a redirect: the CSP's form-action would stop a form's redirect to
      // another origin.
      const signOutUrl = await oidc.endSessionUrl(session.person.idToken);
      if (signOutUrl) {
        return c.html(<SignedOutPage providerName={oidc.settings.providerName} signOutUrl={signOutUrl} />);
      }
    }
    return c.redirect(`${PATH}/sign-in`, 303);
  });

  router.route('/', fleetRoutes());
  router.route('/', nodeRoutes());
  router.route('/', commandRoutes());
  router.route('/', sshRoutes());
  router.route('/', poolRoutes());
  router.route('/', tokenRoutes());
  router.route('/', operationRoutes());
  router.route('/', auditRoutes());
  router.route('/', liveRoutes());

  router.all('*', (c) => notFound(c));
  return router;
}

/**
 * No session (or it ended): a page read goes to the sign-in page, which brings the person back to
 * it after; a POST is refused (its form is not sent again).
 */
function signInAgain(c: Ctx, ended?: keyof typeof ENDED) {
  if (c.req.method === 'GET') {
    const next = landingOf(new URL(c.req.url).pathname + new URL(c.req.url).search);
    const query = new URLSearchParams({ ...(next ? { next } : {}), ...(ended ? { ended } : {}) }).toString();
    return c.redirect(`${PATH}/sign-in${query ? `?${query}` : ''}`, 303);
  }
  return c.html(<Problem title="Sign in first" message="This session has ended: sign in again." />, 403);
}

/**
 * The console page to land on after signing in, from a `next` the browser sent: a path of this
 * origin under /console (a page, not the sign-in itself, the live endpoint or an asset); undefined
 * for anything else, and for the fleet page (the default).
 */
export function landingOf(next: string | undefined): string | undefined {
  if (!next?.startsWith(`${PATH}`)) return undefined;
  const base = 'http://console.invalid';
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return undefined;
  }
  const { pathname, search } = url;
  if (url.origin !== base || (pathname !== PATH && !pathname.startsWith(`${PATH}/`))) return undefined;
  if (/^\/console\/(sign-in|sign-out|oidc|live|assets)(\/|$)/.test(pathname)) return undefined;
  if (pathname === PATH && search === '') return undefined;
  return pathname + search;
}

/**
 * A POST a browser says came from another site is refused: by `Sec-Fetch-Site` (every current
 * browser sends it), else by an `Origin` that is not this one. (Pages say `no-referrer`, so a
 * browser's own form posts carry `Origin: null`; `Sec-Fetch-Site` still says same-origin.) The
 * session cookie is SameSite=Strict as well; this is what stops a forged sign-in.
 */
const sameOrigin = createMiddleware(async (c, next) => {
  if (
    c.req.method === 'POST' &&
    !fromThisSite(c.req.header('sec-fetch-site'), c.req.header('origin'), c.req.url)
  ) {
    return c.html(<Problem title="Refused" message="A form from another site: nothing was changed." />, 403);
  }
  await next();
});

function fromThisSite(fetchSite: string | undefined, origin: string | undefined, url: string): boolean {
  if (fetchSite !== undefined) return fetchSite === 'same-origin';
  return origin === undefined || origin === new URL(url).origin;
}

/**
 * A page for what went wrong: a key the API no longer knows ends the session; any other refusal
 * shows its message with its status; an API that cannot be reached is 503.
 */
async function failure(c: Ctx, sessions: Sessions, error: Error) {
  const session = c.get('session') as Session | undefined;
  if (error instanceof ApiError && error.status === 401 && session) {
    await sessions.close(session.id);
    deleteCookie(c, COOKIE, { path: PATH });
    return c.redirect(`${PATH}/sign-in`, 303);
  }
  if (error instanceof ApiError) {
    const title = error.status === 404 ? 'Not found' : 'The API refused';
    return c.html(
      <Problem title={title} message={`${error.message} (${error.code})`} session={session} />,
      error.status as 400,
    );
  }
  if (error instanceof ProviderUnreachable) {
    return c.html(
      <Problem title="Unavailable" message={`${error.message}: try again in a moment.`} session={session} />,
      503,
    );
  }
  if (error instanceof Unreachable) {
    return c.html(<Problem title="Unavailable" message={error.message} session={session} />, 503);
  }
  throw error;
}
