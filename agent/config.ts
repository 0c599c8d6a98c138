import { z } from 'zod';
import { describeIssue, durationSetting, readYamlConfig } from '../cli-kit/config-file';
import { SLUG_PATTERN } from '../domain/ids';
import { MAX_OUTPUT_BYTES } from '../domain/node-command';
import { CONDITION_TYPE } from '../domain/remediation';
import { UsageError } from './errors';

/**
 * An action a `remediate` or `run` command names, as `--config` maps it (docs/agent/gpu-machine.md,
 * docs/lifecycle/commands.md).
 */
export interface ActionConfig {
  /** The program and its arguments, run as given: no shell; `{name}` stands for parameter `name`'s value. */
  command: string[];
  timeoutMs: number;
  /** It restarts the machine: acked before it runs, and its return reported on the next start. */
  restarts: boolean;
  /** Declared parameters: a value must match `pattern` whole; `default` when a command gives none. */
  params: Record<string, ActionParam>;
  /** The most output a `run` of it keeps, stdout and stderr together, in bytes. */
  outputLimit: number;
}

export interface ActionParam {
  /** As written in the file (reported to the API). */
  pattern: string;
  /** `^(?:pattern)$`, compiled once. */
  matches: RegExp;
  default?: string;
}

/** A health probe: `command` run every `everyMs`; its exit status is condition `condition`'s. */
export interface ProbeConfig {
  command: string[];
  everyMs: number;
  timeoutMs: number;
  condition: string;
}

/** The discovery command: it prints the machine's inventory as JSON (docs/agent/gpu-machine.md#discovery). */
export interface DiscoveryConfig {
  command: string[];
  everyMs: number;
  timeoutMs: number;
}

/** What `drydock-agent run --config FILE` carries out and checks on this machine. */
export interface AgentConfig {
  actions: Record<string, ActionConfig>;
  probes: Record<string, ProbeConfig>;
  /** Absent: the agent reports no inventory (the join's stays). */
  inventory?: DiscoveryConfig;
}

export const DEFAULT_ACTION_TIMEOUT = '5m';
export const DEFAULT_PROBE_EVERY = '30s';
export const DEFAULT_PROBE_TIMEOUT = '10s';
export const DEFAULT_DISCOVERY_EVERY = '1h';
export const DEFAULT_DISCOVERY_TIMEOUT = '30s';

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

/** `{name}` in an action's command: the value of its parameter `name`. */
export const PLACEHOLDER = /\{([a-z][a-z0-9-]{0,62})\}/g;

const param = z.strictObject(
  {
    pattern: z
      .string({ error: 'must be a regular expression the whole value must match, e.g. "[0-9]+[smhd]"' })
      .min(1, 'must not be empty')
      .max(256, 'is at most 256 characters')
      .refine((pattern) => {
        try {
          new RegExp(pattern);
          return true;
        } catch {
          return false;
        }
      }, 'is not a valid regular expression'),
    default: z.string({ error: 'must be a string' }).max(256, 'is at most 256 characters').optional(),
  },
  { error: 'must be a map with pattern (and default)' },
);

const ConfigSchema = z.strictObject(
  {
    actions: names(
      'action',
      z.strictObject(
        {
          command: argv,
          timeout: durationSetting(DEFAULT_ACTION_TIMEOUT),
          restarts: z.boolean({ error: 'must be true or false' }).default(false),
          params: names('parameter', param),
          outputLimit: z
            .number({ error: 'must be a number of bytes' })
            .int('must be a whole number of bytes')
            .min(1024, 'is at least 1024 bytes')
            .max(MAX_OUTPUT_BYTES, `is at most ${MAX_OUTPUT_BYTES} bytes (1 MiB)`)
            .default(MAX_OUTPUT_BYTES),
        },
        { error: 'must be a map with command, timeout, restarts, params, outputLimit' },
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
    inventory: z
      .strictObject(
        {
          command: argv,
          every: durationSetting(DEFAULT_DISCOVERY_EVERY),
          timeout: durationSetting(DEFAULT_DISCOVERY_TIMEOUT),
        },
        { error: 'must be a map with command, every, timeout' },
      )
      .optional(),
  },
  { error: 'must be a map with actions, probes and inventory' },
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
  for (const [name, action] of Object.entries(checked.config.actions)) {
    for (const [, used] of action.command.join(' ').matchAll(PLACEHOLDER)) {
      if (!Object.hasOwn(action.params, used!)) {
        throw new UsageError(
          `--config ${file}: actions.${name}.command: {${used}} names no parameter of the action (declare it under actions.${name}.params)`,
        );
      }
    }
    for (const [param, declared] of Object.entries(action.params)) {
      if (declared.default !== undefined && !declared.matches.test(declared.default)) {
        throw new UsageError(
          `--config ${file}: actions.${name}.params.${param}.default: ${JSON.stringify(declared.default)} does not match its pattern ${declared.pattern}`,
        );
      }
    }
  }
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
  const { actions, probes, inventory } = parsed.data;
  return {
    config: {
      actions: Object.fromEntries(
        Object.entries(actions).map(([name, a]) => [
          name,
          {
            command: a.command,
            timeoutMs: a.timeout,
            restarts: a.restarts,
            outputLimit: a.outputLimit,
            params: Object.fromEntries(
              Object.entries(a.params).map(([param, p]) => [
                param,
                {
                  pattern: p.pattern,
                  matches: new RegExp(`^(?:${p.pattern})$`),
                  ...(p.default === undefined ? {} : { default: p.default }),
                },
              ]),
            ),
          },
        ]),
      ),
      probes: Object.fromEntries(
        Object.entries(probes).map(([name, p]) => [
          name,
          { command: p.command, everyMs: p.every, timeoutMs: p.timeout, condition: p.condition },
        ]),
      ),
      ...(inventory
        ? {
            inventory: { command: inventory.command, everyMs: inventory.every, timeoutMs: inventory.timeout },
          }
        : {}),
    },
  };
}
