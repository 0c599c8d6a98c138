import { Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { ApiError, Unreachable } from '@drydock/client';
import { apiAs, type InProcess } from './api';
import { CONSOLE_PATH as PATH, notFound, type ConsoleEnv, type Ctx } from './context';
import { sessionFor } from './live';
import { Problem } from './layout';
import { ConsoleOidc, KEY_SIGN_IN_ONLY, ProviderUnreachable, type ConsoleSignInSettings } from './oidc';
import {
  endedOf,
  forgetSessionCookie,
  landingOf,
  SESSION_COOKIE,
  sessionCookieOf,
  signInAgain,
  type Ended,
} from './landing';
import { SignedOutPage } from './pages/oidc';
import { SignInPage, type SignInOptions } from './pages/sign-in';
import { sessionRenewal } from './renewal';
import { oidcRoutes, revokeQuietly } from './routes/oidc';
import { commandRoutes } from './routes/commands';
import { sshRoutes } from './routes/ssh';
import { fleetRoutes } from './routes/fleet';
import { LIVE_SCRIPT } from './live-script';
import { liveRoutes } from './routes/live';
import { nodeRoutes } from './routes/nodes';
import { operationRoutes } from './routes/operations';
import { auditRoutes } from './routes/audit';
import { poolRoutes } from './routes/pools';
import { tokenRoutes } from './routes/tokens';
import { securityHeaders } from './security';
import { csrfMatches, Sessions, type Caller, type Session, type SessionStore } from './sessions';
import type { PersonTokens } from './oidc';
import { FLEET_STYLESHEET } from './fleet-style';
import { OPERATION_STYLESHEET } from './operation-style';
import { NODE_STYLESHEET } from './node-style';
import { STYLESHEET } from './style';

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
  const renewed = oidc ? sessionRenewal(oidc, sessions, send) : undefined;
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
    setCookie(c, SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: PATH,
      secure: new URL(c.req.url).protocol === 'https:',
    });
  }

  /** The session is over: its row goes, the browser forgets the cookie. */
  async function end(c: Ctx, session: Session, why?: Ended) {
    await sessions.close(session.id);
    forgetSessionCookie(c, why);
  }

  router.use('*', securityHeaders);
  router.onError((error, c) => failure(c as Ctx, sessions, error));
  // The assets need no session: loading one neither finds nor renews the page's session.
  router.get('/assets/console.css', (c) =>
    c.body(STYLESHEET + FLEET_STYLESHEET + NODE_STYLESHEET + OPERATION_STYLESHEET, 200, {
      'content-type': 'text/css; charset=utf-8',
    }),
  );
  router.get('/assets/live.js', (c) =>
    c.body(LIVE_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
  );

  router.get('/sign-in', (c) =>
    c.html(<SignInPage options={options} next={landingOf(c.req.query('next'))} problem={endedOf(c)} />),
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
      await open(c, key, caller, sessionCookieOf(c));
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
      }),
    );
  }

  // Everything below needs a session; every POST below needs its CSRF token too.
  router.use('*', sameOrigin, async (c, next) => {
    let session = await sessions.find(sessionCookieOf(c));
    if (session && !session.person && !signIn.keySignIn) {
      // Key sign-in turned off: the key sessions opened before end too.
      await end(c, session, 'key-sign-in-off');
      return signInAgain(c, 'key-sign-in-off');
    }
    if (session?.person) {
      if (!oidc) {
        // The provider is no longer configured: nobody can renew this session.
        await end(c, session);
        return signInAgain(c);
      }
      if (oidc.refreshDue(session.person)) {
        const renewal = await renewed!(c, session);
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
    forgetSessionCookie(c, 'rejected');
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
