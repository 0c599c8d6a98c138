import { z } from 'zod';
import { describeIssue, durationSetting, readYamlConfig } from '../cli-kit/config-file';
import { UsageError } from '../cli-kit/usage-error';
import { SLUG_PATTERN } from '../domain/ids';
import type { EndPolicy } from '../domain/scheduler';
import type { BridgeRules } from './reconcile';

/** What every bridge's `--config FILE` says of its cluster (docs/bridges/). */
export interface BridgeConfig {
  rules: BridgeRules;
  sweepEveryMs: number | null;
}

/** `drydock-bridge slurm --config FILE` (docs/bridges/slurm.md). */
export interface SlurmConfig extends BridgeConfig {
  end: EndPolicy;
  spool: string | null;
}

/** `drydock-bridge kubernetes --config FILE` (docs/bridges/kubernetes.md). */
export interface KubernetesConfig extends BridgeConfig {
  /** The grace period of a pod deleted at a drain's deadline; null: the pod's own. */
  deleteGraceMs: number | null;
  /** How long a node may be Ready=False/Unknown before it counts as down; null: the default. */
  notReadyAfterMs: number | null;
}

const tenant = z
  .string()
  .regex(SLUG_PATTERN, 'must be a tenant id: 1–63 of a-z 0-9 -, starting with a letter');

/** The keys every bridge reads: name and owner maps, and the sweep. */
const shared = (owners: string) => ({
  nodes: z
    .record(z.string().min(1), z.string().min(1), {
      error: 'must map scheduler node names to Drydock hostnames',
    })
    .default({}),
  tenants: z.record(z.string().min(1), tenant, { error: `must map ${owners} to tenant ids` }).default({}),
  defaultTenant: tenant.optional(),
  sweepEvery: durationSetting().optional(),
});

const slurmEndAction = z.enum(['requeue', 'cancel'], { error: 'must be requeue or cancel' });

const SlurmSchema = z.strictObject(
  {
    ...shared('accounts'),
    end: z
      .strictObject(
        {
          default: slurmEndAction.default('requeue'),
          partitions: z
            .record(z.string().min(1), slurmEndAction, { error: 'must map partitions to requeue or cancel' })
            .default({}),
        },
        { error: 'must be a map with default and partitions' },
      )
      .default({ default: 'requeue', partitions: {} }),
    spool: z.string().min(1, 'must be a directory').optional(),
  },
  { error: 'must be a map with nodes, tenants, defaultTenant, end, sweepEvery, spool' },
);

const KubernetesSchema = z.strictObject(
  {
    ...shared('namespaces'),
    deleteGracePeriod: durationSetting().optional(),
    notReadyAfter: durationSetting().optional(),
  },
  {
    error: 'must be a map with nodes, tenants, defaultTenant, sweepEvery, deleteGracePeriod, notReadyAfter',
  },
);

export const EMPTY_SLURM_CONFIG: SlurmConfig = {
  rules: { hostnames: {}, tenants: {}, defaultTenant: null },
  sweepEveryMs: null,
  end: { default: 'requeue', byQueue: {} },
  spool: null,
};

export const EMPTY_KUBERNETES_CONFIG: KubernetesConfig = {
  rules: { hostnames: {}, tenants: {}, defaultTenant: null },
  sweepEveryMs: null,
  deleteGraceMs: null,
  notReadyAfterMs: null,
};

/** Reads and checks a file against `schema`; what is wrong is said with its key. */
function read<T>(file: string, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(readYamlConfig(file));
  if (!parsed.success) throw new UsageError(`--config ${file}: ${describeIssue(parsed.error.issues[0]!)}`);
  return parsed.data;
}

interface SharedKeys {
  nodes: Record<string, string>;
  tenants: Record<string, string>;
  defaultTenant?: string;
  sweepEvery?: number;
}

const rulesOf = (c: SharedKeys): BridgeConfig => ({
  rules: { hostnames: c.nodes, tenants: c.tenants, defaultTenant: c.defaultTenant ?? null },
  sweepEveryMs: c.sweepEvery ?? null,
});

export function loadSlurmConfig(file: string): SlurmConfig {
  const c = read(file, SlurmSchema);
  return {
    ...rulesOf(c),
    end: { default: c.end.default, byQueue: c.end.partitions },
    spool: c.spool ?? null,
  };
}

export function loadKubernetesConfig(file: string): KubernetesConfig {
  const c = read(file, KubernetesSchema);
  return {
    ...rulesOf(c),
    deleteGraceMs: c.deleteGracePeriod ?? null,
    notReadyAfterMs: c.notReadyAfter ?? null,
  };
}
