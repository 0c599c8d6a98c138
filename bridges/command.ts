import { urlFlag } from '../cli-kit/flags';
import type { FlagSpecs } from '../cli-kit/spec';

export const DEFAULT_API = 'http://localhost:8080';

/** The flags every bridge takes: where Drydock is, and its key. */
export const drydockFlags = {
  api: { ...urlFlag('the Drydock API'), env: 'DRYDOCK_API', default: DEFAULT_API },
  token: {
    type: 'string',
    value: 'SECRET',
    help: 'an API key with compute:nodes:read, compute:nodes:observe and compute:allocations:observe',
    env: 'DRYDOCK_TOKEN',
    required: true,
  },
} as const satisfies FlagSpecs;
