import type { FlagSpecs } from './command';
import { UsageError } from './errors';

const API_ENV = 'DRYDOCK_API';
const TOKEN_ENV = 'DRYDOCK_TOKEN';
const DEFAULT_API = 'http://localhost:8080';

/** Flags every command accepts. */
export const GLOBAL_FLAGS = {
  api: { type: 'string', value: 'URL', help: `API base URL (env ${API_ENV}, default ${DEFAULT_API})` },
  token: { type: 'string', value: 'SECRET', help: `API key (env ${TOKEN_ENV})` },
  json: { type: 'boolean', help: 'print the API JSON on stdout and nothing else' },
  help: { type: 'boolean', help: 'show help' },
} as const satisfies FlagSpecs;

export interface Globals {
  api: string;
  token: string | undefined;
  json: boolean;
}

/** The global options from flags, falling back to the environment. */
export function resolveGlobals(
  flags: { api?: string; token?: string; json: boolean },
  env: Record<string, string | undefined>,
): Globals {
  const api = flags.api ?? (env[API_ENV] || DEFAULT_API);
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    throw new UsageError(`--api must be an http(s) URL, got '${api}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--api must be an http(s) URL, got '${api}'`);
  }
  return {
    api: api.replace(/\/+$/, ''),
    token: flags.token ?? (env[TOKEN_ENV] || undefined),
    json: flags.json,
  };
}

/** Says how to pass a credential; added to 401 errors when none was given. */
export const TOKEN_HINT = `pass --token SECRET or set ${TOKEN_ENV}`;
/** Says how to point at another API; added when the API cannot be reached. */
export const API_HINT = `pass --api URL or set ${API_ENV}`;
