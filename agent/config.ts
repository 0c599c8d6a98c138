import { z } from 'zod';
import { describeIssue, durationSetting, readYamlConfig } from '../cli-kit/config-file';
import { SLUG_PATTERN } from '../domain/ids';
import { CONDITION_TYPE } from '../domain/remediation';
import { UsageError } from './errors';

/** An action a `remediate` command names, as `--config` maps it (docs/agent/gpu-machine.md). */
export interface ActionConfig {
  /** The program and its arguments, run as given: no shell. */
  command: string[];
  timeoutMs: number;
  /** It restarts the machine: acked before it runs, and its return reported on the next start. */
  restarts: boolean;
}

/** A health probe: `command` run every `everyMs`; its exit status is condition `condition`'s. */
export interface ProbeConfig {
  command: string[];
  everyMs: number;
  timeoutMs: number;
  condition: string;
}

/** What `drydock-agent run --config FILE` carries out and checks on this machine. */
export interface AgentConfig {
  actions: Record<string, ActionConfig>;
  probes: Record<string, ProbeConfig>;
}

export const DEFAULT_ACTION_TIMEOUT = '5m';
export const DEFAULT_PROBE_EVERY = '30s';
export const DEFAULT_PROBE_TIMEOUT = '10s';

/** No `--config`: no actions (every `remediate` is refused, saying so) and no probes; flags may add some. */
export const EMPTY_CONFIG: AgentConfig = { actions: {}, probes: {} };

const argv = z
  .array(z.string({ error: 'must be a list of strings' }).min(1, 'must not be empty'), {
    error: 'must be a list: the program, then its arguments, e.g. ["nvidia-smi", "-r"]',
  })
  .min(1, 'must name a program: an empty command runs nothing');

const names = <T extends z.ZodType>(what: string, value: T) =>
  z
    .record(z.string().regex(SLUG_PATTERN), value, {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'is not a valid name: 1–63 of a-z 0-9 -, starting with a letter'
          : `must be a map of ${what} names to their settings`,
    })
    .default({});

const ConfigSchema = z.strictObject(
  {
    actions: names(
      'action',
      z.strictObject(
        {
          command: argv,
          timeout: durationSetting(DEFAULT_ACTION_TIMEOUT),
          restarts: z.boolean({ error: 'must be true or false' }).default(false),
        },
        { error: 'must be a map with command, timeout, restarts' },
      ),
    ),
    probes: names(
      'probe',
      z.strictObject(
        {
          command: argv,
          every: durationSetting(DEFAULT_PROBE_EVERY),
          timeout: durationSetting(DEFAULT_PROBE_TIMEOUT),
          condition: z
            .string({ error: 'must name a condition type such as GpuXidError' })
            .regex(
              CONDITION_TYPE,
              'must be a condition type such as GpuXidError: a letter, then letters and digits',
            ),
        },
        { error: 'must be a map with command, every, timeout, condition' },
      ),
    ),
  },
  { error: 'must be a map with actions and probes' },
);

/**
 * Reads and checks the agent's configuration file (YAML). Anything wrong is a usage error naming
 * the key: an unknown key, an empty command, a bad duration, a condition type the API would not
 * take, two probes for one condition.
 */
export function loadAgentConfig(file: string): AgentConfig {
  return parseAgentConfig(readYamlConfig(file), file);
}

/** Checks a configuration already parsed from YAML (`file` names it in errors). */
export function parseAgentConfig(document: unknown, file: string): AgentConfig {
  const checked = checkConfig(document);
  if ('issue' in checked) throw new UsageError(`--config ${file}: ${describeIssue(checked.issue)}`);
  const probed = new Map<string, string>();
  for (const [name, probe] of Object.entries(checked.config.probes)) {
    const other = probed.get(probe.condition);
    if (other !== undefined) {
      throw new UsageError(
        `--config ${file}: probes.${name}.condition: ${probe.condition} is already probed by probes.${other}; one probe per condition`,
      );
    }
    probed.set(probe.condition, name);
  }
  return checked.config;
}

/**
 * Checks actions and probes in the file's form (`{ actions: { NAME: { command, … } }, probes }`),
 * however they were given (the file, or flags in agent/config-flags.ts): the configuration, or the
 * first problem found, with its path.
 */
export function checkConfig(raw: unknown): { config: AgentConfig } | { issue: z.core.$ZodIssue } {
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) return { issue: parsed.error.issues[0]! };
  const { actions, probes } = parsed.data;
  return {
    config: {
      actions: Object.fromEntries(
        Object.entries(actions).map(([name, a]) => [
          name,
          { command: a.command, timeoutMs: a.timeout, restarts: a.restarts },
        ]),
      ),
      probes: Object.fromEntries(
        Object.entries(probes).map(([name, p]) => [
          name,
          { command: p.command, everyMs: p.every, timeoutMs: p.timeout, condition: p.condition },
        ]),
      ),
    },
  };
}
