import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { CliError } from '../errors';

/**
 * The CLI's side of the OpenID provider, with openid-client: discovery, the device authorization
 * grant (RFC 8628), refreshing and revoking. Loaded only by the commands and the refresh that need
 * it, so a command with an API key does not pay for loading it.
 */

/** What identifies the CLI at a provider, as `drydock login` was given it and the sign-in keeps it. */
export interface ClientAt {
  issuer: string;
  clientId: string;
  scope: string;
  resource?: string;
}

/** Tokens from the provider, and who they are for. */
export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  expiresAt: string;
  subject: string;
  email?: string;
}

/** The device authorization the person confirms in a browser. */
export interface DeviceAuthorization {
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  /** When the code stops working (epoch ms). */
  expiresAt: number;
  /** Polls the token endpoint at the provider's interval until the person confirms or the code expires. */
  tokens(): Promise<Tokens>;
}

/** The provider's configuration from its discovery document, for the CLI's public client. */
async function discover(client: ClientAt): Promise<oidc.Configuration> {
  const issuer = new URL(client.issuer);
  try {
    return await oidc.discovery(issuer, client.clientId, undefined, oidc.None(), {
      execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
    });
  } catch (error) {
    throw providerFailure(client, 'read the discovery document of', error);
  }
}

/** Starts the device authorization grant: the code to show and the polling that follows. */
export async function startDeviceAuthorization(client: ClientAt): Promise<DeviceAuthorization> {
  const config = await discover(client);
  if (!config.serverMetadata().device_authorization_endpoint) {
    throw new CliError(
      'SIGN_IN',
      `the OpenID provider at ${client.issuer} offers no device authorization endpoint: enable the device authorization grant (RFC 8628) for client '${client.clientId}'`,
    );
  }
  const parameters = withResource({ scope: client.scope }, client);
  const started = await oidc.initiateDeviceAuthorization(config, parameters).catch((error: unknown) => {
    throw providerFailure(client, 'start the device authorization at', error);
  });
  const expiresAt = Date.now() + started.expires_in * 1000;
  return {
    userCode: started.user_code,
    verificationUri: started.verification_uri,
    verificationUriComplete: started.verification_uri_complete,
    expiresAt,
    async tokens() {
      // openid-client waits the provider's `interval` (5 s when it names none) between polls, and
      // 5 s more at each `slow_down`; the code's expiry ends it.
      const expiry = AbortSignal.timeout(Math.max(0, expiresAt - Date.now()));
      const answer = await oidc
        .pollDeviceAuthorizationGrant(config, started, withResource({}, client), { signal: expiry })
        .catch((error: unknown) => {
          if (expiry.aborted || oauthError(error) === 'expired_token') {
            throw new CliError(
              'SIGN_IN',
              `the code ${started.user_code} expired before it was confirmed: run drydock login again`,
            );
          }
          if (oauthError(error) === 'access_denied') {
            throw new CliError(
              'SIGN_IN',
              `the sign-in was refused at ${client.issuer}${descriptionOf(error)}`,
            );
          }
          throw providerFailure(client, 'sign in at', error);
        });
      return tokensOf(answer);
    },
  };
}

/** Why a refresh did not give new tokens: the provider refused the refresh token, or could not be asked. */
export class RefreshRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** New tokens for a refresh token; `RefreshRefused` when the provider says it is no longer good. */
export async function refresh(client: ClientAt, refreshToken: string): Promise<Tokens> {
  const config = await discover(client);
  const answer = await oidc
    .refreshTokenGrant(config, refreshToken, withResource({}, client))
    .catch((error: unknown) => {
      const code = oauthError(error);
      if (code === 'invalid_grant' || code === 'invalid_client' || code === 'unauthorized_client') {
        throw new RefreshRefused(`the provider refused the refresh token (${code}${descriptionOf(error)})`);
      }
      throw providerFailure(client, 'renew the sign-in at', error);
    });
  const tokens = tokensOf(answer);
  // A provider that does not rotate refresh tokens answers none: the one we have stays good.
  return { ...tokens, refreshToken: tokens.refreshToken ?? refreshToken };
}

/**
 * Revokes a refresh token at the provider (RFC 7009): `revoked` when it did, `unsupported` when
 * the provider offers no revocation endpoint.
 */
export async function revoke(client: ClientAt, refreshToken: string): Promise<'revoked' | 'unsupported'> {
  const config = await discover(client);
  if (!config.serverMetadata().revocation_endpoint) return 'unsupported';
  await oidc
    .tokenRevocation(config, refreshToken, { token_type_hint: 'refresh_token' })
    .catch((error: unknown) => {
      throw providerFailure(client, 'revoke the refresh token at', error);
    });
  return 'revoked';
}

function withResource(parameters: Record<string, string>, client: ClientAt): Record<string, string> {
  return client.resource ? { ...parameters, resource: client.resource } : parameters;
}

function tokensOf(answer: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers): Tokens {
  const expiresIn = answer.expiresIn();
  // Who signed in: the ID token's claims (openid-client checked its signature, issuer, audience
  // and times), else the access token's, read only to say whom it names: the API verifies it.
  const claims: Record<string, unknown> = answer.claims() ?? readJwt(answer.access_token) ?? {};
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresAt: new Date(
      expiresIn === undefined ? readExpiry(answer.access_token) : Date.now() + expiresIn * 1000,
    ).toISOString(),
    subject,
    email: typeof claims.email === 'string' ? claims.email : undefined,
  };
}

function readJwt(token: string): Record<string, unknown> | undefined {
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

/** When an access token expires by its `exp` (epoch ms), for a provider that said no `expires_in`; now if neither. */
function readExpiry(token: string): number {
  const exp = readJwt(token)?.exp;
  return typeof exp === 'number' ? exp * 1000 : Date.now();
}

/** The OAuth error code of a provider's refusal (`invalid_grant`, `access_denied`, …). */
function oauthError(error: unknown): string | undefined {
  return error instanceof oidc.ResponseBodyError ? error.error : undefined;
}

function descriptionOf(error: unknown): string {
  const description = error instanceof oidc.ResponseBodyError ? error.error_description : undefined;
  return description ? `: ${description}` : '';
}

/** A provider that could not be reached or answered out of turn, said with what was being done. */
function providerFailure(client: ClientAt, doing: string, error: unknown): CliError {
  const code = oauthError(error);
  if (code) {
    return new CliError('SIGN_IN', `cannot ${doing} ${client.issuer}: ${code}${descriptionOf(error)}`);
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const detail =
    typeof cause?.code === 'string'
      ? cause.code
      : typeof cause?.message === 'string'
        ? cause.message
        : (error as Error | undefined)?.message;
  return new CliError(
    'PROVIDER_UNREACHABLE',
    `cannot ${doing} the OpenID provider at ${client.issuer}${detail ? ` (${detail})` : ''}`,
  );
}
