import { z } from 'zod';
import { describeIssue, durationSetting, readYamlConfig } from '../cli-kit/config-file';
import { UsageError } from '../cli-kit/usage-error';
import { SLUG_PATTERN } from '../domain/ids';
import { ENDING_ACTIONS } from '../domain/observed';
import type { BridgeRules } from './reconcile';

/** What `drydock-bridge slurm --config FILE` says of the cluster (docs/bridges/slurm.md). */
export interface BridgeConfig {
  rules: BridgeRules;
  sweepEveryMs: number | null;
  spool: string | null;
}

export const EMPTY_BRIDGE_CONFIG: BridgeConfig = {
  rules: { hostnames: {}, tenants: {}, defaultTenant: null, end: { default: 'requeue', byQueue: {} } },
  sweepEveryMs: null,
  spool: null,
};

const tenant = z
  .string()
  .regex(SLUG_PATTERN, 'must be a tenant id: 1–63 of a-z 0-9 -, starting with a letter');
const endAction = z.enum(ENDING_ACTIONS, { error: 'must be requeue or cancel' });

const ConfigSchema = z.strictObject(
  {
    nodes: z
      .record(z.string().min(1), z.string().min(1), {
        error: 'must map scheduler node names to Drydock hostnames',
      })
      .default({}),
    tenants: z.record(z.string().min(1), tenant, { error: 'must map accounts to tenant ids' }).default({}),
    defaultTenant: tenant.optional(),
    end: z
      .strictObject(
        {
          default: endAction.default('requeue'),
          partitions: z
            .record(z.string().min(1), endAction, { error: 'must map partitions to requeue or cancel' })
            .default({}),
        },
        { error: 'must be a map with default and partitions' },
      )
      .default({ default: 'requeue', partitions: {} }),
    sweepEvery: durationSetting().optional(),
    spool: z.string().min(1, 'must be a directory').optional(),
  },
  { error: 'must be a map with nodes, tenants, defaultTenant, end, sweepEvery, spool' },
);

/** Reads and checks the bridge's configuration file (YAML); what is wrong is said with its key. */
export function loadBridgeConfig(file: string): BridgeConfig {
  const parsed = ConfigSchema.safeParse(readYamlConfig(file));
  if (!parsed.success) throw new UsageError(`--config ${file}: ${describeIssue(parsed.error.issues[0]!)}`);
  const c = parsed.data;
  return {
    rules: {
      hostnames: c.nodes,
      tenants: c.tenants,
      defaultTenant: c.defaultTenant ?? null,
      end: { default: c.end.default, byQueue: c.end.partitions },
    },
    sweepEveryMs: c.sweepEvery ?? null,
    spool: c.spool ?? null,
  };
}
