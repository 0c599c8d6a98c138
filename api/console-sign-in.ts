import type { Config } from '../config';
import { CALLBACK_PATH, type ConsoleSignInSettings } from '../console/oidc';
import { readPrivateKeyFile } from '../private-key-file';

/**
 * The console's sign-in settings from `config`; throws naming what is missing or wrong, so that a
 * misconfigured API does not start. Client id, secret file and redirect URL go together, and need
 * the API to trust the same provider's tokens (`DRYDOCK_OIDC_ISSUER`, `_AUDIENCE`, `_GROUP_MAP`):
 * the console calls the API with the person's access token.
 */
export function consoleSignInOf(config: Config): ConsoleSignInSettings {
  const keySignIn = config.DRYDOCK_CONSOLE_KEY_SIGN_IN === '1';
  const {
    DRYDOCK_OIDC_CLIENT_ID: clientId,
    DRYDOCK_OIDC_CLIENT_SECRET_FILE: secretFile,
    DRYDOCK_OIDC_REDIRECT_URL: redirectUrl,
  } = config;
  const problem = (text: string) => new Error(`invalid configuration: ${text} (docs/sign-in.md)`);
  if (!clientId && !secretFile && !redirectUrl) {
    for (const name of ['DRYDOCK_OIDC_RESOURCE', 'DRYDOCK_OIDC_PROVIDER_NAME'] as const) {
      if (config[name]) throw problem(`${name} is set without DRYDOCK_OIDC_CLIENT_ID`);
    }
    if (!keySignIn) {
      throw problem(
        'DRYDOCK_CONSOLE_KEY_SIGN_IN=0 leaves the console no way to sign in: configure its OpenID client (DRYDOCK_OIDC_CLIENT_ID, DRYDOCK_OIDC_CLIENT_SECRET_FILE, DRYDOCK_OIDC_REDIRECT_URL)',
      );
    }
    return { keySignIn };
  }
  if (!clientId || !secretFile || !redirectUrl) {
    throw problem(
      'DRYDOCK_OIDC_CLIENT_ID, DRYDOCK_OIDC_CLIENT_SECRET_FILE and DRYDOCK_OIDC_REDIRECT_URL go together',
    );
  }
  const issuer = config.DRYDOCK_OIDC_ISSUER;
  if (!issuer || !config.DRYDOCK_OIDC_AUDIENCE || !config.DRYDOCK_OIDC_GROUP_MAP) {
    throw problem(
      'the console signs in at the provider the API trusts: DRYDOCK_OIDC_CLIENT_ID needs DRYDOCK_OIDC_ISSUER, DRYDOCK_OIDC_AUDIENCE and DRYDOCK_OIDC_GROUP_MAP',
    );
  }
  const redirect = new URL(redirectUrl);
  if (
    !['http:', 'https:'].includes(redirect.protocol) ||
    redirect.pathname !== CALLBACK_PATH ||
    redirect.search !== '' ||
    redirect.hash !== ''
  ) {
    throw problem(
      `DRYDOCK_OIDC_REDIRECT_URL is the console's callback as the browser reaches it: http(s)://<host>${CALLBACK_PATH}, without a query (got ${redirectUrl})`,
    );
  }
  const scopes = config.DRYDOCK_OIDC_SCOPES.trim().split(/\s+/);
  if (!scopes.includes('openid') || scopes.some((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) {
    throw problem(
      `DRYDOCK_OIDC_SCOPES is a space-separated list of scopes with openid among them (got ${config.DRYDOCK_OIDC_SCOPES})`,
    );
  }
  const clientSecret = readPrivateKeyFile(secretFile, 'DRYDOCK_OIDC_CLIENT_SECRET_FILE').trim();
  if (!clientSecret) throw problem(`DRYDOCK_OIDC_CLIENT_SECRET_FILE ${secretFile} is empty`);
  return {
    keySignIn,
    oidc: {
      issuer,
      clientId,
      clientSecret,
      redirectUrl: redirect.href,
      postLogoutRedirectUrl: new URL('/console/sign-in', redirect).href,
      scopes: scopes.join(' '),
      resource: config.DRYDOCK_OIDC_RESOURCE,
      providerName: config.DRYDOCK_OIDC_PROVIDER_NAME ?? new URL(issuer).host,
    },
  };
}
