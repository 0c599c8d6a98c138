import { resolve } from 'node:path';
import { defineWordCommand } from '../../cli-kit/word-command';
import { bridgeUntilStopped, clusterFlags, DEFAULT_API, DEFAULT_SWEEP_MS, drydockFlags } from '../command';
import { EMPTY_SLURM_CONFIG, loadSlurmConfig } from '../config';
import { slurmScheduler } from './scheduler';

const DEFAULT_SPOOL = '/run/drydock-bridge';

/** `drydock-bridge slurm`: a Slurm cluster's nodes and jobs in step with Drydock, until stopped. */
export const slurmCommand = defineWordCommand({
  words: ['slurm'],
  summary: "keep a Slurm cluster's drains and jobs in step with Drydock until stopped",
  operands: [],
  flags: {
    ...clusterFlags('slurm', {
      config: 'node name and account maps, end policy per partition (YAML; docs/bridges/slurm.md)',
      configDefault: 'none: names as they are, tenants from the nodes, requeue where a job allows it',
      sweep: 'the safety net under the hook and the event feed',
    }),
    spool: {
      type: 'string',
      value: 'DIR',
      help: 'the directory bin/drydock-slurm-hook writes to (its DRYDOCK_BRIDGE_SPOOL)',
      default: `the config's spool, else ${DEFAULT_SPOOL}`,
    },
    ...drydockFlags,
  },
  async run({ flags, json, env }) {
    const config = flags.config === undefined ? EMPTY_SLURM_CONFIG : loadSlurmConfig(flags.config);
    const scheduler = slurmScheduler({
      cluster: flags.cluster,
      env,
      end: config.end,
      spool: resolve(flags.spool ?? config.spool ?? DEFAULT_SPOOL),
    });
    return bridgeUntilStopped({
      scheduler,
      config,
      sweepEveryMs: flags['sweep-every'] ?? config.sweepEveryMs ?? DEFAULT_SWEEP_MS,
      api: flags.api ?? DEFAULT_API,
      token: flags.token,
      json,
    });
  },
});
