import { deleteCookie, getCookie } from 'hono/cookie';
import { CONSOLE_PATH as PATH, type Ctx } from './context';
import { Problem } from './layout';

/** The cookie that holds a browser's session id (httpOnly, SameSite=Strict, path /console). */
export const SESSION_COOKIE = 'drydock_session';

/** The session id the browser sent, if any. */
export const sessionCookieOf = (c: Ctx) => getCookie(c, SESSION_COOKIE);

/** The browser forgets its session cookie. */
export const forgetSessionCookie = (c: Ctx) => deleteCookie(c, SESSION_COOKIE, { path: PATH });

/** Why the sign-in page is shown, by its `ended` parameter: fixed words, never the URL's. */
const ENDED = {
  refresh: 'Your sign-in at the provider could not be renewed (it ended there): sign in again.',
  'key-sign-in-off': 'Signing in with an API key is turned off on this console: sign in again.',
};
export const endedOf = (why: string | undefined) =>
  why !== undefined && Object.hasOwn(ENDED, why) ? ENDED[why as keyof typeof ENDED] : undefined;

/**
 * No session (or it ended): a page read goes to the sign-in page, which brings the person back to
 * it after; a POST is refused (its form is not sent again).
 */
export function signInAgain(c: Ctx, ended?: keyof typeof ENDED) {
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
