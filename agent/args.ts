import { UsageError } from './errors';

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** What the value is, for the help text (`URL`, `DIR`). */
  value?: string;
  help: string;
  required?: boolean;
}

export type FlagSpecs = Record<string, FlagSpec>;

/** Flags every command takes; before the command, only these may come. */
export const GLOBAL_FLAGS = {
  json: { type: 'boolean', help: 'machine output: JSON on stdout, JSON log lines on stderr' },
  help: { type: 'boolean', help: 'show help' },
} as const satisfies FlagSpecs;

export interface ParsedArgs {
  command: string | undefined;
  flags: Map<string, string | true>;
}

/**
 * Reads `drydock-agent [--json] COMMAND [--flag value | --flag=value | --switch]…`. An unknown
 * flag, a missing value, a missing required flag or a stray argument is a usage error.
 */
export function parseArgs(
  argv: readonly string[],
  specsOf: (command: string) => FlagSpecs | undefined,
): ParsedArgs {
  const flags = new Map<string, string | true>();
  let i = 0;
  for (; i < argv.length && argv[i]!.startsWith('-'); i++) {
    const name = argv[i] === '-h' ? 'help' : argv[i]!.slice(2);
    if (!(name in GLOBAL_FLAGS)) throw new UsageError(`unknown flag '${argv[i]}' before the command`);
    flags.set(name, true);
  }
  const command = argv[i++];
  if (command === undefined) return { command, flags };
  const specs = specsOf(command);
  if (!specs) throw new UsageError(`unknown command '${command}'; one of join, run, stop`);
  const all: FlagSpecs = { ...GLOBAL_FLAGS, ...specs };

  for (; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!token.startsWith('--')) throw new UsageError(`unexpected argument '${token}'`);
    const eq = token.indexOf('=');
    const name = token.slice(2, eq === -1 ? undefined : eq);
    const spec = all[name];
    if (!spec) throw new UsageError(`unknown flag '--${name}' for '${command}'`);
    if (flags.has(name)) throw new UsageError(`--${name} given twice`);
    if (spec.type === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) value = token.slice(eq + 1);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) value = argv[++i];
    if (!value) throw new UsageError(`--${name} needs a value (${spec.value ?? 'VALUE'})`);
    flags.set(name, value);
  }

  if (!flags.has('help')) {
    for (const [name, spec] of Object.entries(specs)) {
      if (spec.required && !flags.has(name)) {
        throw new UsageError(`${command} needs --${name}${spec.value ? ` ${spec.value}` : ''}`);
      }
    }
  }
  return { command, flags };
}

/** The help text of a command's flags, one per line. */
export function flagHelp(specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => [
    `--${name}${spec.value ? ` ${spec.value}` : ''}`,
    `${spec.help}${spec.required ? ' (required)' : ''}`,
  ]);
  const width = Math.max(...rows.map(([left]) => left!.length));
  return rows.map(([left, right]) => `  ${left!.padEnd(width)}  ${right}`).join('\n');
}
