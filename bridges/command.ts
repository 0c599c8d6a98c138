import { createApiClient } from '@drydock/client';
import { baseUrl, urlFlag } from '../cli-kit/flags';
import { stderrLog } from '../cli-kit/log';
import type { FlagSpecs } from '../cli-kit/spec';
import type { BridgeConfig } from './config';
import { DrydockSide } from './drydock';
import { runBridge } from './run';
import type { Scheduler } from './scheduler';

export const DEFAULT_API = 'http://localhost:8080';

/** How often a pass runs with no wake-up, unless told: the scheduler's own signals do the quick work. */
export const DEFAULT_SWEEP_MS = 30_000;

/** The flags every bridge takes about its cluster: its name, the config file, the sweep. */
export function clusterFlags(
  scheduler: string,
  help: { config: string; configDefault: string; sweep: string },
) {
  return {
    cluster: {
      type: 'string',
      value: 'NAME',
      help: `the cluster: its allocations are recorded as source ${scheduler}:NAME`,
      required: true,
      pattern: /^[a-z0-9][a-z0-9._-]{0,62}$/,
      patternHint: '1–63 of a-z 0-9 . _ -, starting with a letter or digit',
    },
    config: { type: 'string', value: 'FILE', help: help.config, default: help.configDefault },
    'sweep-every': {
      type: 'duration',
      value: 'DURATION',
      min: 100,
      help: `a full pass at least this often (${help.sweep})`,
      default: `the config's sweepEvery, else ${DEFAULT_SWEEP_MS / 1000}s`,
    },
  } as const satisfies FlagSpecs;
}

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

/** How long one call to Drydock may take (the feed's long-poll sets its own). */
const CALL_TIMEOUT_MS = 30_000;

/** Runs a bridge of `scheduler` until SIGTERM or SIGINT; resolves to the exit code. */
export async function bridgeUntilStopped(options: {
  scheduler: Scheduler;
  config: BridgeConfig;
  sweepEveryMs: number;
  api: string;
  token: string;
  json: boolean;
}): Promise<number> {
  const { scheduler, sweepEveryMs } = options;
  const api = createApiClient({
    baseUrl: baseUrl(options.api),
    token: options.token,
    timeoutMs: CALL_TIMEOUT_MS,
  });
  const log = stderrLog('drydock-bridge', options.json);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  log('info', `bridging ${scheduler.source} to ${api.baseUrl}; a full pass every ${sweepEveryMs / 1000}s`);
  try {
    await runBridge({
      scheduler,
      drydock: new DrydockSide(api, scheduler.source),
      rules: options.config.rules,
      sweepEveryMs,
      log,
      signal: stop.signal,
    });
    log('info', 'stopped');
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
