import { z } from 'zod';

/** Every setting Drydock reads, from the environment, validated once at start-up (DESIGN.md). */
const schema = z.object({
  DATABASE_URL: z.string().url().optional(),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('drydock'),
  TEMPORAL_CLI: z.string().min(1).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  DRYDOCK_CLUSTER_ID: z.string().min(1).default('drydock-dev'),
  DRYDOCK_CA_KEY_FILE: z.string().min(1).optional(),
  DRYDOCK_BOOTSTRAP_OPERATOR_KEY: z.string().min(16).optional(),
  DRYDOCK_DEMO: z.enum(['0', '1']).default('1'),
  DRYDOCK_HOME: z.string().min(1).default('.drydock'),
  /** A prebuilt workflow bundle for `worker.ts` (tests build one per run); unset, it bundles at start. */
  DRYDOCK_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  /** Fault injection for crash tests (worker.ts): SIGKILL the worker after its Nth completed step. */
  DRYDOCK_FAULT_KILL_AFTER_STEP: z.coerce.number().int().min(1).optional(),
  /** With the above: only the steps of this workflow id count. */
  DRYDOCK_FAULT_KILL_WORKFLOW_ID: z.string().min(1).optional(),
});

export type Config = z.infer<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** The names the config schema reads; docker-compose.yml may use only these. */
export const CONFIG_KEYS = Object.keys(schema.shape);
