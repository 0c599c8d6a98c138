import { urlFlag } from '../cli-kit/flags';
import type { FlagSpecs } from '../cli-kit/spec';

const API_ENV = 'DRYDOCK_API';
const TOKEN_ENV = 'DRYDOCK_TOKEN';
export const DEFAULT_API = 'http://localhost:8080';

/** Flags every command accepts; a flag not given is read from its environment variable. */
export const GLOBAL_FLAGS = {
  api: { ...urlFlag('API base URL'), env: API_ENV, default: DEFAULT_API },
  token: {
    type: 'string',
    value: 'SECRET',
    help: 'API key (else the sign-in of drydock login for --api)',
    env: TOKEN_ENV,
  },
  json: { type: 'boolean', help: 'print the API JSON on stdout and nothing else' },
  help: { type: 'boolean', help: 'show help' },
} as const satisfies FlagSpecs;

/** Says how to pass a credential; added to 401 errors when none was given. */
export const TOKEN_HINT = `sign in with 'drydock login --issuer URL', or pass --token SECRET or set ${TOKEN_ENV}`;
/** Says how to point at another API; added when the API cannot be reached. */
export const API_HINT = `pass --api URL or set ${API_ENV}`;
