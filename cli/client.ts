import { ApiError, createApiClient, Unreachable, type ApiClient } from '@drydock/client';
import { CliError } from './errors';
import { API_HINT, TOKEN_HINT } from './globals';

export type { ApiClient } from '@drydock/client';

/** How long one request may take before the command gives up on it. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The shared API client as the CLI uses it: the `--api` and `--token` the command line resolved. */
export function cliClient(baseUrl: string, token: string | undefined): ApiClient {
  return createApiClient({ baseUrl, token, timeoutMs: REQUEST_TIMEOUT_MS });
}

/**
 * A failed call as the command line reports it: a refusal keeps the API's code (which sets the
 * exit code), with a hint when no credential was given; no answer says which API and how to
 * point at another. Anything else is not the client's: it is returned as it is.
 */
export function cliFailure(error: unknown, globals: { api: string; token?: string }): unknown {
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
  const hint = error.code === 'UNAUTHENTICATED' && !globals.token ? `; ${TOKEN_HINT}` : '';
  return new CliError(error.code, error.message + hint);
}
