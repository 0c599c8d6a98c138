import { resolve } from 'node:path';
import { createApiClient } from '@drydock/client';
import { baseUrl } from '../../cli-kit/flags';
import { parseDuration } from '../../domain/duration';
import { stderrLog } from '../../cli-kit/log';
import { defineWordCommand } from '../../cli-kit/word-command';
import { DEFAULT_API, drydockFlags } from '../command';
import { EMPTY_BRIDGE_CONFIG, loadBridgeConfig } from '../config';
import { DrydockSide } from '../drydock';
import { runBridge } from '../run';
import { slurmScheduler } from './scheduler';

/** How often a pass runs with no wake-up, unless told: the hook and the feed do the quick work. */
const DEFAULT_SWEEP = '30s';
const DEFAULT_SPOOL = '/run/drydock-bridge';
/** How long one call to Drydock may take (the feed's long-poll sets its own). */
const CALL_TIMEOUT_MS = 30_000;

/** `drydock-bridge slurm`: a Slurm cluster's nodes and jobs in step with Drydock, until stopped. */
export const slurmCommand = defineWordCommand({
  words: ['slurm'],
  summary: "keep a Slurm cluster's drains and jobs in step with Drydock until stopped",
  operands: [],
  flags: {
    cluster: {
      type: 'string',
      value: 'NAME',
      help: 'the cluster: its allocations are recorded as source slurm:NAME',
      required: true,
      pattern: /^[a-z0-9][a-z0-9._-]{0,62}$/,
      patternHint: '1–63 of a-z 0-9 . _ -, starting with a letter or digit',
    },
    config: {
      type: 'string',
      value: 'FILE',
      help: 'node name and account maps, end policy per partition (YAML; docs/bridges/slurm.md)',
      default: 'none: names as they are, tenants from the nodes, requeue where a job allows it',
    },
    'sweep-every': {
      type: 'duration',
      value: 'DURATION',
      min: 100,
      help: 'a full pass at least this often (the safety net under the hook and the event feed)',
      default: `the config's sweepEvery, else ${DEFAULT_SWEEP}`,
    },
    spool: {
      type: 'string',
      value: 'DIR',
      help: 'the directory bin/drydock-slurm-hook writes to (its DRYDOCK_BRIDGE_SPOOL)',
      default: `the config's spool, else ${DEFAULT_SPOOL}`,
    },
    ...drydockFlags,
  },
  async run({ flags, json, env }) {
    const config = flags.config === undefined ? EMPTY_BRIDGE_CONFIG : loadBridgeConfig(flags.config);
    const scheduler = slurmScheduler({
      cluster: flags.cluster,
      env,
      spool: resolve(flags.spool ?? config.spool ?? DEFAULT_SPOOL),
    });
    const api = createApiClient({
      baseUrl: baseUrl(flags.api ?? DEFAULT_API),
      token: flags.token,
      timeoutMs: CALL_TIMEOUT_MS,
    });
    const log = stderrLog('drydock-bridge', json);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    const sweepEveryMs = flags['sweep-every'] ?? config.sweepEveryMs ?? parseDuration(DEFAULT_SWEEP)!;
    log('info', `bridging ${scheduler.source} to ${api.baseUrl}; a full pass every ${sweepEveryMs / 1000}s`);
    try {
      await runBridge({
        scheduler,
        drydock: new DrydockSide(api, scheduler.source),
        rules: config.rules,
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
  },
});
