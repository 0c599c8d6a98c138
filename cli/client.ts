import { ApiError, createApiClient, Unreachable, type ApiClient } from '@drydock/client';
import { loginAgain, type Credential } from './credential';
import { CliError } from './errors';
import { API_HINT, TOKEN_HINT } from './globals';

export type { ApiClient } from '@drydock/client';

/** How long one request may take before the command gives up on it. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The shared API client as the CLI uses it, against the `--api` the command line resolved: with a
 * bearer as given (`--token`, a login's new token), or with the command's credential, asked before
 * each call so a cached sign-in about to expire is refreshed first.
 */
export function cliClient(baseUrl: string, credential: Credential | string | undefined): ApiClient {
  if (credential === undefined || typeof credential === 'string') {
    return createApiClient({ baseUrl, token: credential, timeoutMs: REQUEST_TIMEOUT_MS });
  }
  let bearer: string | undefined;
  const client = createApiClient({ baseUrl, token: () => bearer, timeoutMs: REQUEST_TIMEOUT_MS });
  // Each call asks the credential first (a refresh, when due), then sends with what it answered.
  const first =
    (call: (...args: never[]) => Promise<unknown>) =>
    async (...args: never[]) => {
      bearer = await credential.bearer();
      return call(...args);
    };
  return {
    baseUrl: client.baseUrl,
    GET: first(client.GET) as ApiClient['GET'],
    POST: first(client.POST) as ApiClient['POST'],
    PUT: first(client.PUT) as ApiClient['PUT'],
    PATCH: first(client.PATCH) as ApiClient['PATCH'],
    DELETE: first(client.DELETE) as ApiClient['DELETE'],
  };
}

/**
 * A failed call as the command line reports it: a refusal keeps the API's code (which sets the
 * exit code), with a hint when the credential was missing or a sign-in's token was refused; no
 * answer says which API and how to point at another. Anything else is not the client's: it is
 * returned as it is.
 */
export function cliFailure(error: unknown, globals: { api: string; credential: Credential }): unknown {
  if (error instanceof Unreachable) {
    const detail = error.detail ? ` (${error.detail})` : '';
    return new CliError(
      'UNREACHABLE',
      `cannot reach the Drydock API at ${error.baseUrl}${detail}; ${API_HINT}`,
    );
  }
  if (!(error instanceof ApiError)) return error;
  if (error.code === 'BAD_RESPONSE') {
    return new CliError('BAD_RESPONSE', `${error.message}; is ${globals.api} a Drydock API?`);
  }
  return new CliError(error.code, error.message + unauthenticatedHint(error, globals));
}

function unauthenticatedHint(
  error: ApiError,
  { api, credential }: { api: string; credential: Credential },
): string {
  if (error.code !== 'UNAUTHENTICATED') return '';
  if (credential.source === 'none') return `; ${TOKEN_HINT}`;
  if (credential.source === 'sign-in') return `; ${loginAgain(api, credential.signIn!.issuer)}`;
  return '';
}
