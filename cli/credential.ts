import type { Env } from '../cli-kit/spec';
import { CliError } from './errors';
import { DEFAULT_API } from './globals';
import { cachePlace, readSignIn, updateSignIn, type CachePlace, type SignIn } from './sign-in/cache';

/**
 * The one place the CLI decides which credential a command sends, in this order:
 * 1. `--token` or `DRYDOCK_TOKEN` (an API key, or any bearer), as given;
 * 2. else the sign-in `drydock login` saved for `--api`: its access token, refreshed first when it
 *    expires within a minute;
 * 3. else none (the API then answers 401, and the error says how to sign in).
 * Nothing is read until the first call asks for it, so a command that sends nothing (`migrate`,
 * `login`) never touches the sign-in file.
 */
export interface Credential {
  /** Where the bearer comes from; `sign-in` once the file had an entry for the API. */
  readonly source: 'token' | 'sign-in' | 'none';
  /** The sign-in in use, when the source is one. */
  readonly signIn: SignIn | undefined;
  /** The bearer for the next call, refreshed when it is about to expire; undefined: none. */
  bearer(): Promise<string | undefined>;
}

/** A cached access token this close to its expiry is refreshed before it is sent. */
export const REFRESH_BEFORE_MS = 60_000;

export function credentialFor(options: { api: string; token: string | undefined; env: Env }): Credential {
  const { api, token, env } = options;
  if (token) return { source: 'token', signIn: undefined, bearer: async () => token };
  return new CachedSignIn(api, cachePlace(env));
}

/** What to run when a sign-in cannot go on: the same login, against the same API. */
export function loginAgain(api: string, issuer: string): string {
  const apiFlag = api === DEFAULT_API ? '' : ` --api ${api}`;
  return `run 'drydock login --issuer ${issuer}${apiFlag}' again`;
}

class CachedSignIn implements Credential {
  source: 'sign-in' | 'none' = 'none';
  signIn: SignIn | undefined;
  private loaded = false;
  /** The refresh in flight: concurrent calls of one command wait for the same one. */
  private refreshing: Promise<SignIn> | undefined;

  constructor(
    private readonly api: string,
    private readonly place: CachePlace,
  ) {}

  async bearer(): Promise<string | undefined> {
    if (!this.loaded) {
      this.signIn = await readSignIn(this.place, this.api);
      this.source = this.signIn ? 'sign-in' : 'none';
      this.loaded = true;
    }
    if (!this.signIn) return undefined;
    if (!expiresSoon(this.signIn)) return this.signIn.accessToken;
    this.refreshing ??= this.refresh(this.signIn).finally(() => (this.refreshing = undefined));
    this.signIn = await this.refreshing;
    return this.signIn.accessToken;
  }

  /**
   * Refreshes under the file's lock: another process may have refreshed since this one read the
   * file, and then its newer entry is used as it is (its refresh token was rotated: ours is spent).
   */
  private refresh(stale: SignIn): Promise<SignIn> {
    const { api } = this;
    return updateSignIn(this.place, api, async (current) => {
      if (!current) {
        throw new CliError(
          'UNAUTHENTICATED',
          `signed out of ${api} meanwhile; ${loginAgain(api, stale.issuer)}`,
        );
      }
      if (!expiresSoon(current)) return { entry: current, result: current };
      if (!current.refreshToken) {
        throw new CliError(
          'UNAUTHENTICATED',
          `the sign-in to ${api} has expired and the provider gave no refresh token to renew it; ${loginAgain(api, current.issuer)}`,
        );
      }
      const { refresh, RefreshRefused } = await import('./sign-in/provider');
      try {
        const tokens = await refresh(current, current.refreshToken);
        const renewed: SignIn = { ...current, ...tokens, email: tokens.email ?? current.email };
        return { entry: renewed, result: renewed };
      } catch (error) {
        if (!(error instanceof RefreshRefused)) throw error;
        // Another process may have refreshed without the lock (another machine sharing the file):
        // its newer entry holds the rotated refresh token and a fresh access token.
        const newer = await readSignIn(this.place, api);
        if (newer && newer.refreshToken !== current.refreshToken && !expiresSoon(newer)) {
          return { entry: newer, result: newer };
        }
        throw new CliError(
          'UNAUTHENTICATED',
          `the sign-in to ${api} has expired and cannot be renewed: ${error.reason}; ${loginAgain(api, current.issuer)}`,
        );
      }
    });
  }
}

const expiresSoon = (signIn: SignIn) => Date.parse(signIn.expiresAt) - Date.now() < REFRESH_BEFORE_MS;
