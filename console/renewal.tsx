import { ApiError } from '@drydock/client';
import { apiAs, type InProcess } from './api';
import type { Ctx } from './context';
import { forgetSessionCookie, signInAgain } from './landing';
import { ProviderRefused, ProviderUnreachable, type ConsoleOidc, type PersonTokens } from './oidc';
import { RefusedPage } from './pages/oidc';
import { refusalOf, revokeQuietly } from './routes/oidc';
import type { Session, Sessions } from './sessions';

/** How a renewal went, besides the session kept: ended by the provider, refused by the API, or failed after the refresh. */
type Renewal =
  undefined | { ended: true } | { refused: ApiError; idToken: string | undefined } | { error: unknown };

/** How long a request whose token has expired waits for another request's renewal of it. */
const RENEWAL_WAIT_MS = 15_000;

/**
 * Renews people's sessions for the console (docs/sign-in.md, Sessions follow the provider): `oidc`
 * refreshes the tokens, the API (through `send`) says again who the person is.
 */
export function sessionRenewal(oidc: ConsoleOidc, sessions: Sessions, send: InProcess) {
  /**
   * A person's session whose access token is near its end, renewed with the refresh token and
   * the person checked again by the API (their groups may have changed at the provider). Answers
   * the session to go on with, or the page that ends it: refused (no mapped group any more), or
   * signed out (the provider refused the refresh).
   */
  async function renewed(c: Ctx, session: Session): Promise<Session | Response> {
    const waitUntil = Date.now() + RENEWAL_WAIT_MS;
    for (;;) {
      const done = await renewOnce(c, oidc, session);
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
      c.var.deps.log.info(
        { person: session.caller.name },
        'console session ended: the API refused the person',
      );
      forgetSessionCookie(c, 'refused');
      const refusal = await refusalOf(provider, outcome.refused, session.caller.name, outcome.idToken);
      return c.html(<RefusedPage refusal={refusal} />, 403);
    }
    if (outcome && 'ended' in outcome) {
      c.var.deps.log.info(
        { person: session.caller.name },
        'console session ended: the provider refused its refresh',
      );
      forgetSessionCookie(c, 'refresh');
      return signInAgain(c, 'refresh');
    }
    return done.session!;
  }

  return renewed;
}
