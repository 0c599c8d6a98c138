import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { ApiError, Unreachable } from '@drydock/client';
import { apiAs, type InProcess } from './api';
import { CONSOLE_PATH as PATH, notFound, type ConsoleEnv, type Ctx } from './context';
import { sessionFor } from './live';
import { Problem } from './layout';
import { SignInPage } from './pages/sign-in';
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
import { csrfMatches, Sessions, type Session, type SessionStore } from './sessions';
import { STYLESHEET } from './style';

const COOKIE = 'drydock_session';

/**
 * The admin console under /console (docs/console.md): server-rendered pages over the API, called
 * in-process through the shared typed client as the signed-in key. `send` hands a request to the
 * API app; `store` keeps the sessions.
 */
export function consoleRoutes(send: InProcess, store: SessionStore): Hono<ConsoleEnv> {
  const sessions = new Sessions(store);
  const router = new Hono<ConsoleEnv>();

  router.use('*', securityHeaders);
  router.onError((error, c) => failure(c as Ctx, sessions, error));
  router.get('/assets/console.css', (c) =>
    c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8' }),
  );

  router.get('/sign-in', (c) => c.html(<SignInPage />));
  router.post('/sign-in', sameOrigin, async (c) => {
    const form = await c.req.parseBody();
    const key = typeof form.key === 'string' ? form.key.trim() : '';
    try {
      const caller = await apiAs(c, key, send).GET('/v1/whoami');
      // A browser signing in again leaves its earlier session behind, ended.
      const earlier = getCookie(c, COOKIE);
      if (earlier) await sessions.close(earlier);
      const session = await sessions.open(key, caller);
      setCookie(c, COOKIE, session.id, {
        httpOnly: true,
        sameSite: 'Strict',
        path: PATH,
        secure: new URL(c.req.url).protocol === 'https:',
      });
      return c.redirect(PATH, 303);
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
      return c.html(<SignInPage problem={problem} />, error.status === 429 ? 429 : 403);
    }
  });

  // Everything below needs a session; every POST below needs its CSRF token too.
  router.use('*', sameOrigin, async (c, next) => {
    const session = await sessions.find(getCookie(c, COOKIE));
    if (!session) {
      if (c.req.method === 'GET') return c.redirect(`${PATH}/sign-in`, 303);
      return c.html(<Problem title="Sign in first" message="This session has ended: sign in again." />, 403);
    }
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
    await sessions.close(c.var.session.id);
    deleteCookie(c, COOKIE, { path: PATH });
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
  if (error instanceof Unreachable) {
    return c.html(<Problem title="Unavailable" message={error.message} session={session} />, 503);
  }
  throw error;
}
