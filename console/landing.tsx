import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { CONSOLE_PATH as PATH, type Ctx } from './context';
import { Problem } from './layout';

/** The cookie that holds a browser's session id (httpOnly, SameSite=Strict, path /console). */
export const SESSION_COOKIE = 'drydock_session';

/** The session id the browser sent, if any. */
export const sessionCookieOf = (c: Ctx) => getCookie(c, SESSION_COOKIE);

/**
 * Why a session ended, kept in a cookie for the sign-in page: the request that met the end may
 * have been a page's background read (console/assets/live.js), whose answer nobody sees.
 */
const ENDED_COOKIE = 'drydock_ended';

/**
 * The browser forgets its session cookie; with `why`, it keeps the reason until the sign-in page
 * shows it.
 */
export function forgetSessionCookie(c: Ctx, why?: Ended) {
  deleteCookie(c, SESSION_COOKIE, { path: PATH });
  if (why) setCookie(c, ENDED_COOKIE, why, { httpOnly: true, sameSite: 'Strict', path: PATH, maxAge: 600 });
}

/** Why the sign-in page is shown, by its `ended` parameter or the cookie: fixed words, never the URL's. */
const ENDED = {
  refresh: 'Your sign-in at the provider could not be renewed (it ended there): sign in again.',
  refused:
    'Drydock no longer lets you in: your groups at the provider map to no role here. Ask an administrator to add you to a mapped group.',
  rejected: "The API no longer accepts this session's credential (revoked or expired): sign in again.",
  'key-sign-in-off': 'Signing in with an API key is turned off on this console: sign in again.',
};
export type Ended = keyof typeof ENDED;
const isEnded = (why: string | undefined): why is Ended => why !== undefined && Object.hasOwn(ENDED, why);

/** What the sign-in page says of the session that ended, once: the reason cookie goes with it. */
export function endedOf(c: Ctx): string | undefined {
  const remembered = getCookie(c, ENDED_COOKIE);
  if (remembered !== undefined) deleteCookie(c, ENDED_COOKIE, { path: PATH });
  const why = c.req.query('ended') ?? remembered;
  return isEnded(why) ? ENDED[why] : undefined;
}

/**
 * No session (or it ended): a page read goes to the sign-in page, which brings the person back to
 * it after; a POST is refused (its form is not sent again).
 */
export function signInAgain(c: Ctx, ended?: Ended) {
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
