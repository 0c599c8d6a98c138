import type { FlagSpec, FlagValues } from '../cli-kit/spec';
import {
  checkConfig,
  DEFAULT_ACTION_TIMEOUT,
  DEFAULT_PROBE_EVERY,
  DEFAULT_PROBE_TIMEOUT,
  type AgentConfig,
} from './config';
import { UsageError } from './errors';

/** How many of each a command line may give; a machine with more has a config file. */
const MAX_GIVEN = 32;

/** A repeatable `KEY=COMMAND` flag: each value whole, since a command line may hold commas. */
const commandFlag = (value: string, help: string) =>
  ({
    type: 'list',
    value,
    maxItems: MAX_GIVEN,
    repeatable: true,
    whole: true,
    help,
  }) as const satisfies FlagSpec;

/**
 * `run`'s actions and probes on the command line, for a machine set up without a file (a systemd
 * unit's `ExecStart`). Each adds to `--config`'s entries and replaces the one it names.
 */
export const configFlags = {
  action: commandFlag(
    'NAME=COMMAND',
    `a remediate command for action NAME runs COMMAND (timeout ${DEFAULT_ACTION_TIMEOUT}), split into words on spaces: no shell, no quoting (an argument with a space needs --config); replaces --config's action NAME`,
  ),
  'restarting-action': commandFlag(
    'NAME=COMMAND',
    'the same for an action that restarts the machine (restarts: true), e.g. reboot=systemctl reboot',
  ),
  probe: commandFlag(
    'CONDITION=COMMAND',
    `a health probe of condition CONDITION (e.g. GpuXidError), named after it: COMMAND, split like --action's, runs every ${DEFAULT_PROBE_EVERY} (timeout ${DEFAULT_PROBE_TIMEOUT}); replaces --config's probe of CONDITION`,
  ),
} as const;

/**
 * `config` (from `--config`, or empty) with the flags' actions and probes added, each checked by
 * the file's rules; a problem is a usage error naming the flag as given, e.g.
 * `--action reset-accelerator=: must name a program: an empty command runs nothing`.
 */
export function withConfigFlags(config: AgentConfig, flags: FlagValues<typeof configFlags>): AgentConfig {
  const actions = { ...config.actions };
  const actionGiven = new Map<string, string>();
  for (const [flag, restarts] of [
    ['action', false],
    ['restarting-action', true],
  ] as const) {
    for (const item of flags[flag] ?? []) {
      const given = `--${flag} ${item}`;
      const [name, command] = split(given, item, 'NAME');
      const earlier = actionGiven.get(name);
      if (earlier !== undefined)
        throw new UsageError(`${given}: action ${name} is already given by ${earlier}`);
      actionGiven.set(name, given);
      actions[name] = check(given, { actions: { [name]: { command, restarts } } }).actions[name]!;
    }
  }

  let probes = { ...config.probes };
  const probeGiven = new Map<string, string>();
  for (const item of flags.probe ?? []) {
    const given = `--probe ${item}`;
    const [condition, command] = split(given, item, 'CONDITION');
    const probe = check(given, { probes: { given: { command, condition } } }).probes.given!;
    const earlier = probeGiven.get(condition);
    if (earlier !== undefined) throw new UsageError(`${given}: ${condition} is already probed by ${earlier}`);
    probeGiven.set(condition, given);
    probes = Object.fromEntries(Object.entries(probes).filter(([, p]) => p.condition !== condition));
    const named = probes[condition];
    if (named !== undefined) {
      throw new UsageError(
        `${given}: --config's probe ${condition} probes ${named.condition}; rename it in the file`,
      );
    }
    probes[condition] = probe;
  }
  return { ...config, actions, probes };
}

/** `NAME=COMMAND` → the name and COMMAND's words (split on whitespace; none when it is empty). */
function split(given: string, item: string, key: string): [string, string[]] {
  const eq = item.indexOf('=');
  if (eq <= 0) throw new UsageError(`${given}: must be ${key}=COMMAND`);
  return [
    item.slice(0, eq),
    item
      .slice(eq + 1)
      .split(/\s+/)
      .filter((word) => word !== ''),
  ];
}

/** One flag's entry, in the file's form, checked by the file's rules. */
function check(given: string, raw: unknown): AgentConfig {
  const checked = checkConfig(raw);
  if ('issue' in checked) throw new UsageError(`${given}: ${checked.issue.message}`);
  return checked.config;
}
