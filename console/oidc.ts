import * as client from 'openid-client';
import { derivedKey, seal, unseal } from './sealing';

/** How the console signs people in (docs/sign-in.md, The console): an API key, the provider, or both. */
export interface ConsoleSignInSettings {
  /** The API-key form (break-glass); `DRYDOCK_CONSOLE_KEY_SIGN_IN=0` turns it off. */
  keySignIn: boolean;
  /** Sign-in at the OpenID provider; unset: none. */
  oidc?: ConsoleOidcSettings;
}

/** The console's client at the provider. */
export interface ConsoleOidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Where the provider sends the browser back: `…/console/oidc/callback`. */
  redirectUrl: string;
  /** Where the provider sends the browser after signing out there: the console's sign-in page. */
  postLogoutRedirectUrl: string;
  /** Space-separated, `openid` among them. */
  scopes: string;
  /** A resource indicator (RFC 8707) sent in the authorization and token requests. */
  resource?: string;
  /** The name on the sign-in button. */
  providerName: string;
}

export const CALLBACK_PATH = '/console/oidc/callback';

/** Key sign-in alone: what a console without the settings below does. */
export const KEY_SIGN_IN_ONLY: ConsoleSignInSettings = { keySignIn: true };

/** A signed-in person's tokens, as the session keeps them (sealed). */
export interface PersonTokens {
  accessToken: string;
  /** When the access token expires (epoch ms), by its `expires_in`. */
  accessExpiresAt: number;
  /** When it was issued (epoch ms): a refresh is due in its last minute, or its second half if it lives less than two. */
  obtainedAt: number;
  refreshToken?: string;
  /** For RP-initiated logout (`id_token_hint`). */
  idToken?: string;
}

/** What the sign-in flow keeps in its cookie between the start and the callback. */
export interface SignInFlow {
  state: string;
  nonce: string;
  verifier: string;
  /** The console page to land on. */
  next: string;
  /** The browser's session before this sign-in, ended when it completes (sealed like the rest). */
  earlier?: string;
  /** When the flow started (epoch ms). */
  startedAt: number;
}

/** How long a sign-in may take at the provider. */
export const FLOW_TTL_MS = 10 * 60 * 1000;

/** The provider refused (a grant, a check of its answer): the person must sign in again. */
export class ProviderRefused extends Error {}
/** The provider could not be reached or answered nonsense: try again later. */
export class ProviderUnreachable extends Error {}

/** How long one request to the provider may take (seconds). */
const PROVIDER_TIMEOUT_SECONDS = 10;

/**
 * The console's OpenID client (openid-client): discovery once per process (again after a
 * failure), the authorization URL with state, nonce and PKCE, the code exchange that checks them,
 * refreshes, revocation and the provider's logout URL.
 */
export class ConsoleOidc {
  private discovered: Promise<client.Configuration> | null = null;
  private readonly flowKey: Buffer;

  constructor(readonly settings: ConsoleOidcSettings) {
    // The flow cookie is sealed under a key every API process derives from the client secret.
    this.flowKey = derivedKey(settings.clientSecret, 'drydock console sign-in flow');
  }

  /** The provider's authorization URL for a new flow, and the flow to keep (sealed) in the cookie. */
  async start(
    next: string,
    earlier: string | undefined,
    now = Date.now(),
  ): Promise<{ url: string; flow: string }> {
    const config = await this.configuration();
    const flow: SignInFlow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      next,
      earlier,
      startedAt: now,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
      ...this.resource(),
    });
    return { url: url.href, flow: this.sealFlow(flow) };
  }

  /** The flow a cookie holds; undefined when it is not one of ours or is too old. */
  openFlow(sealed: string | undefined, now = Date.now()): SignInFlow | undefined {
    const text = sealed === undefined ? undefined : unseal(this.flowKey, sealed);
    if (text === undefined) return undefined;
    const flow = JSON.parse(text) as SignInFlow;
    return now - flow.startedAt < FLOW_TTL_MS ? flow : undefined;
  }

  /**
   * The callback's code exchanged for tokens: openid-client checks the state, the PKCE verifier
   * and the ID token's nonce. `search` is the callback's query as the browser brought it.
   */
  async finish(
    search: string,
    flow: SignInFlow,
    now = Date.now(),
  ): Promise<{ tokens: PersonTokens; claims: Record<string, unknown> }> {
    const config = await this.configuration();
    const current = new URL(this.settings.redirectUrl);
    current.search = search;
    const answer = await this.ask(() =>
      client.authorizationCodeGrant(
        config,
        current,
        {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        },
        this.resource(),
      ),
    );
    return { tokens: tokensOf(answer, now), claims: { ...answer.claims() } };
  }

  /** Whether the session's access token is near enough its end to refresh it now. */
  refreshDue(tokens: PersonTokens, now = Date.now()): boolean {
    const margin = Math.min(60_000, (tokens.accessExpiresAt - tokens.obtainedAt) / 2);
    return now >= tokens.accessExpiresAt - margin;
  }

  /** New tokens for a refresh token (the provider may rotate it: the old one is then spent). */
  async refresh(tokens: PersonTokens, now = Date.now()): Promise<PersonTokens> {
    if (!tokens.refreshToken) throw new ProviderRefused('the provider gave this session no refresh token');
    const config = await this.configuration();
    const answer = await this.ask(() =>
      client.refreshTokenGrant(config, tokens.refreshToken!, this.resource()),
    );
    const renewed = tokensOf(answer, now);
    return {
      ...renewed,
      refreshToken: renewed.refreshToken ?? tokens.refreshToken,
      idToken: renewed.idToken ?? tokens.idToken,
    };
  }

  /** Revokes a refresh token where the provider has a revocation endpoint; a failure is only logged by the caller. */
  async revoke(tokens: PersonTokens): Promise<void> {
    if (!tokens.refreshToken) return;
    const config = await this.configuration();
    if (!config.serverMetadata().revocation_endpoint) return;
    await this.ask(() =>
      client.tokenRevocation(config, tokens.refreshToken!, { token_type_hint: 'refresh_token' }),
    );
  }

  /** The provider's logout URL (RP-initiated logout), back to the sign-in page; undefined when it has none. */
  async endSessionUrl(idToken: string | undefined): Promise<string | undefined> {
    const config = await this.configuration().catch(() => undefined);
    if (!config?.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(config, {
      post_logout_redirect_uri: this.settings.postLogoutRedirectUrl,
      ...(idToken ? { id_token_hint: idToken } : {}),
    }).href;
  }

  private resource(): Record<string, string> {
    return this.settings.resource ? { resource: this.settings.resource } : {};
  }

  /** The provider's metadata, discovered once (again after a failure). */
  private configuration(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    const url = new URL(issuer);
    // Plain http only to a provider on this machine (development, tests).
    const local = url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    this.discovered ??= client
      .discovery(url, clientId, clientSecret, client.ClientSecretBasic(clientSecret), {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        execute: local ? [client.allowInsecureRequests] : [],
      })
      .catch((error: unknown) => {
        this.discovered = null;
        throw new ProviderUnreachable(`the OpenID provider ${issuer} could not be read`, { cause: error });
      });
    return this.discovered;
  }

  /** A request to the provider, its failure sorted: refused (sign in again) or unreachable. */
  private async ask<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (unreachable(error)) {
        throw new ProviderUnreachable('the OpenID provider could not be reached', { cause: error });
      }
      throw new ProviderRefused(refusalOf(error), { cause: error });
    }
  }

  private sealFlow(flow: SignInFlow): string {
    return seal(this.flowKey, JSON.stringify(flow));
  }
}

function tokensOf(answer: client.TokenEndpointResponse, now: number): PersonTokens {
  return {
    accessToken: answer.access_token,
    // A provider that says no lifetime: taken as five minutes, and refreshed within.
    accessExpiresAt: now + (answer.expires_in ?? 300) * 1000,
    obtainedAt: now,
    refreshToken: answer.refresh_token,
    idToken: answer.id_token,
  };
}

/** openid-client's codes for an answer that is no OAuth answer at all (a 5xx page, say). */
const BROKEN_ANSWERS = new Set([
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
  'OAUTH_TIMEOUT',
]);

/** A network failure, a timeout or a broken answer, anywhere in the error's causes. */
function unreachable(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.message === 'fetch failed') return true;
    if (e instanceof client.ClientError && e.code && BROKEN_ANSWERS.has(e.code)) return true;
  }
  return false;
}

/** Why the provider (or the check of its answer) refused, in words; never a token. */
function refusalOf(error: unknown): string {
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    return `${error.error}${error.error_description ? `: ${error.error_description}` : ''}`;
  }
  if (!(error instanceof Error)) return String(error);
  // openid-client's own words are general ("invalid response encountered"); its cause says which check.
  const cause = error.cause instanceof Error ? error.cause.message : '';
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}
