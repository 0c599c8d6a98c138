import { ApiError, type Schemas } from '@drydock/client';
import { cliClient } from '../client';
import { defineCommand, type Command } from '../command';
import type { Credential } from '../credential';
import { CliError } from '../errors';
import { clock, dash, fields, type Output } from '../output';
import { cachePlace, updateSignIn, type SignIn } from '../sign-in/cache';
import type { DeviceAuthorization, Tokens } from '../sign-in/provider';

/**
 * Signing in as a person (docs/sign-in.md, The CLI): `drydock login` runs the OAuth 2.0 device
 * authorization grant at the OpenID provider and keeps the tokens for `--api`; every command then
 * sends them (cli/credential.ts) unless `--token` is given. `logout` ends it; `whoami` says who the
 * API takes the caller for.
 */

export const DEFAULT_CLIENT_ID = 'drydock-cli';
export const DEFAULT_SCOPE = 'openid email profile groups offline_access';

/** https, or http on this machine only (a provider for development, such as `npm start -- --oidc`). */
export function acceptableIssuer(value: string): boolean {
  try {
    const url = new URL(value);
    if (url.search || url.hash) return false;
    const local =
      url.hostname === 'localhost' || url.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(url.hostname);
    return url.protocol === 'https:' || (url.protocol === 'http:' && local);
  } catch {
    return false;
  }
}

/** An absolute URI, as RFC 8707 asks of a resource indicator, without a fragment. */
function absoluteUri(value: string): boolean {
  try {
    return !new URL(value).hash && /^[a-z][a-z0-9+.-]*:/i.test(value);
  } catch {
    return false;
  }
}

const login = defineCommand({
  words: ['login'],
  summary:
    'Sign in as yourself at your OpenID provider (device code: confirm in a browser); later commands use it for --api',
  operands: [],
  flags: {
    issuer: {
      type: 'string',
      value: 'URL',
      required: true,
      maxLength: 2000,
      accepts: acceptableIssuer,
      patternHint: 'the https URL of the OpenID provider (http only on localhost/127.0.0.1)',
      help: "the OpenID provider's issuer URL (the API's DRYDOCK_OIDC_ISSUER)",
    },
    'client-id': {
      type: 'string',
      value: 'ID',
      pattern: /^[\x21-\x7E]{1,200}$/,
      patternHint: 'a client id: visible ASCII, no spaces',
      default: DEFAULT_CLIENT_ID,
      help: "the CLI's public client at the provider, allowed the device authorization grant",
    },
    scope: {
      type: 'string',
      value: 'SCOPES',
      pattern: /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/,
      patternHint: 'scopes separated by single spaces',
      maxLength: 2000,
      default: `"${DEFAULT_SCOPE}"`,
      help: 'the scopes to ask for (offline_access: a refresh token at most providers)',
    },
    resource: {
      type: 'string',
      value: 'URI',
      maxLength: 2000,
      accepts: absoluteUri,
      patternHint: 'an absolute URI such as api://drydock or https://drydock.example.com',
      help: "the resource indicator (RFC 8707) of Drydock's API at the provider, if it wants one",
    },
  },
  async run({ api, flags, out, env }) {
    const client = {
      issuer: flags.issuer,
      clientId: flags['client-id'] ?? DEFAULT_CLIENT_ID,
      scope: flags.scope ?? DEFAULT_SCOPE,
      ...(flags.resource ? { resource: flags.resource } : {}),
    };
    // Ctrl-C before the person confirmed: nothing is saved yet, so stop at once (the handler is in
    // place before the code is shown). After, it waits for the check and the save to finish (one
    // request, one rename), and stops before saving if the check is still running.
    let interrupted = false;
    const stopNow = () => {
      out.note('error: INTERRUPTED: sign-in stopped before it was confirmed; nothing was saved');
      process.exit(130);
    };
    const stopLater = () => void (interrupted = true);
    process.on('SIGINT', stopNow);
    let countdown: NodeJS.Timeout | undefined;
    let tokens: Tokens;
    try {
      const { startDeviceAuthorization } = await import('../sign-in/provider');
      const device = await startDeviceAuthorization(client);
      showCode(out, device);
      // On a terminal, the time the code has left, redrawn each second.
      if (out.io.stderrIsTTY) {
        countdown = setInterval(
          () => out.progress(`waiting… ${timeLeft(device.expiresAt - Date.now())} left`),
          1000,
        );
      }
      tokens = await device.tokens();
    } finally {
      clearInterval(countdown);
      out.clearProgress();
      process.off('SIGINT', stopNow);
    }
    process.on('SIGINT', stopLater);
    try {
      const caller = await callerWith(api.baseUrl, client.issuer, tokens, client.resource);
      if (interrupted) throw new CliError('INTERRUPTED', 'sign-in stopped: nothing was saved', 130);
      const signIn: SignIn = { ...client, ...tokens };
      // A sign-in it replaces is revoked at its provider (best effort): its refresh token would
      // otherwise stay good with nobody holding it.
      const replaced = await updateSignIn(cachePlace(env), api.baseUrl, async (current) => ({
        entry: signIn,
        result: current,
      }));
      if (replaced?.refreshToken) {
        const { revoke } = await import('../sign-in/provider');
        await revoke(replaced, replaced.refreshToken).catch((error: unknown) => {
          if (!(error instanceof CliError)) throw error;
          out.note(`note: the sign-in this one replaces could not be revoked: ${error.message}`);
        });
      }
      const who = tokens.email ?? tokens.subject;
      const role = caller.kind === 'tenant' ? `tenant ${caller.tenantId}` : caller.kind;
      out.result(
        {
          api: api.baseUrl,
          issuer: client.issuer,
          subject: tokens.subject,
          email: tokens.email ?? null,
          kind: caller.kind,
          tenantId: caller.tenantId,
          expiresAt: tokens.expiresAt,
        },
        () => `signed in to ${api.baseUrl} as ${who} (${role})`,
      );
    } finally {
      process.off('SIGINT', stopLater);
    }
  },
});

/** Where to go and the code, on stderr (stdout is the result's, with --json too). */
function showCode(out: Output, device: DeviceAuthorization): void {
  const lines = device.verificationUriComplete
    ? [
        'To sign in, open this page in a browser and check that it shows the code below:',
        '',
        `  ${device.verificationUriComplete}`,
        '',
        `  code: ${device.userCode}   (or open ${device.verificationUri} and type it)`,
      ]
    : [
        'To sign in, open this page in a browser and type the code:',
        '',
        `  ${device.verificationUri}`,
        '',
        `  code: ${device.userCode}`,
      ];
  out.note(lines.join('\n'));
  out.note(
    `\nWaiting for you to sign in there (the code expires at ${clock(new Date(device.expiresAt).toISOString())}; Ctrl-C to stop)…`,
  );
}

/** `9m 05s` */
function timeLeft(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/**
 * Asks the API who the new token is: a provider the API does not trust (401) or a person whose
 * groups it does not map (403) is said as such, and nothing is saved.
 */
async function callerWith(
  apiUrl: string,
  issuer: string,
  tokens: Tokens,
  resource: string | undefined,
): Promise<Schemas['Caller']> {
  const who = tokens.email ?? tokens.subject;
  try {
    return await cliClient(apiUrl, tokens.accessToken).GET('/v1/whoami');
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 403) {
      const groups = Array.isArray(error.details.groups)
        ? (error.details.groups as unknown[]).join(', ')
        : '';
      throw new CliError(
        'FORBIDDEN',
        `${who} signed in at ${issuer}, but the API at ${apiUrl} gives them no role: ${error.message}` +
          `${groups ? ` (their groups: ${groups})` : ' (their token lists no groups)'}. ` +
          'Ask an operator to add one of your groups to the group map; nothing was saved',
      );
    }
    if (error.status === 401) {
      const audience = resource ? ` for ${resource}` : '';
      throw new CliError(
        'UNAUTHENTICATED',
        `the API at ${apiUrl} does not accept the token ${issuer} issued${audience}: ${error.message}. ` +
          `Check that the API trusts this provider (DRYDOCK_OIDC_ISSUER, DRYDOCK_OIDC_AUDIENCE) and pass --resource if the provider wants one; nothing was saved`,
      );
    }
    throw error;
  }
}

const logout = defineCommand({
  words: ['logout'],
  summary: 'Sign out of --api: revoke the refresh token at the provider, forget the tokens',
  operands: [],
  flags: {},
  async run({ api, out, env }) {
    const outcome = await updateSignIn(cachePlace(env), api.baseUrl, async (current) => {
      if (!current) return { entry: undefined, result: undefined };
      let refreshToken: 'revoked' | 'not revocable' | 'none' | 'not revoked' = 'none';
      let failure: string | undefined;
      if (current.refreshToken) {
        const { revoke } = await import('../sign-in/provider');
        try {
          refreshToken =
            (await revoke(current, current.refreshToken)) === 'revoked' ? 'revoked' : 'not revocable';
        } catch (error) {
          if (!(error instanceof CliError)) throw error;
          refreshToken = 'not revoked';
          failure = error.message;
        }
      }
      // Forgotten whatever the provider said: the person asked to be signed out here.
      return { entry: undefined, result: { signIn: current, refreshToken, failure } };
    });
    if (!outcome) {
      out.result(
        { api: api.baseUrl, signedOut: false },
        () => `not signed in to ${api.baseUrl}: nothing to do`,
      );
      return;
    }
    const { signIn, refreshToken, failure } = outcome;
    const who = signIn.email ?? signIn.subject;
    const untilExpiry = `its last access token works until ${clock(signIn.expiresAt)}`;
    const said = {
      revoked: `its refresh token is revoked at ${signIn.issuer}; ${untilExpiry}`,
      'not revocable': `${signIn.issuer} offers no token revocation: its refresh token stays valid there until it expires`,
      none: untilExpiry,
      'not revoked': `its refresh token could not be revoked: ${failure}`,
    }[refreshToken];
    out.result(
      { api: api.baseUrl, signedOut: true, issuer: signIn.issuer, subject: signIn.subject, refreshToken },
      () => `signed out of ${api.baseUrl} (${who}): the sign-in is removed; ${said}`,
    );
    return refreshToken === 'not revoked' ? 1 : 0;
  },
});

const whoami = defineCommand({
  words: ['whoami'],
  summary: 'Who the API takes you for: kind, name, tenant, actions; and the credential sent',
  operands: [],
  flags: {},
  async run({ api, credential, out }) {
    const me = await api.GET('/v1/whoami');
    out.result(me, () =>
      fields([
        ['kind', me.kind],
        ['name', me.name],
        ['tenant', dash(me.tenantId)],
        ['actions', me.actions.join(', ')],
        ...(me.person ? [['person', `${me.person.subject} at ${me.person.issuer}`] as const] : []),
        ['credential', credentialSaid(credential)],
      ]),
    );
  },
});

function credentialSaid(credential: Credential): string {
  const signIn = credential.signIn;
  if (credential.source !== 'sign-in' || !signIn) return '--token or DRYDOCK_TOKEN';
  return `signed in at ${signIn.issuer} (drydock login); access token until ${signIn.expiresAt}`;
}

export const signInCommands: Command[] = [login, logout, whoami];
