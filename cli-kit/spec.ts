/**
 * The command tables of `drydock` and `drydock-agent`: what a command, its operands and its flags
 * are. One table serves the parser, the help text and docs/cli.md, so they cannot disagree.
 */

interface FlagBase {
  help: string;
  /** Another flag this one only makes sense with, e.g. `--timeout` needs `--wait`. */
  requires?: string;
  /** The line is refused without it, e.g. `token create --ttl`; help shows it without brackets. */
  required?: boolean;
  /** The environment variable read when the flag is not given; set to the empty string it is unset. */
  env?: string;
  /** What applies when the flag is absent, said in help and the reference (the handler applies it). */
  default?: string;
}

/** A command-line flag; its value is checked before any request is sent. */
export type FlagSpec =
  | (FlagBase & { type: 'boolean' })
  | (FlagBase & {
      type: 'string';
      /** Placeholder shown in help, e.g. `R`. */
      value: string;
      choices?: readonly string[];
      pattern?: RegExp;
      /** A test beyond a pattern, e.g. that `--ttl` parses as a duration. */
      accepts?: (value: string) => boolean;
      /** What a value must look like, said when `pattern` or `accepts` refuses it. */
      patternHint?: string;
      maxLength?: number;
    })
  | (FlagBase & { type: 'integer'; value: string; min: number; max?: number })
  /** Comma-separated items, e.g. `--add k1,k2`; its value is the distinct items in order. */
  | (FlagBase & {
      type: 'list';
      /** Placeholder shown in help, e.g. `K1,K2`. */
      value: string;
      maxItems: number;
      /** May be given more than once (`--label a=1 --label b=2`); the items of all count together. */
      repeatable?: boolean;
      /** Each value is one item as given, commas and all (a command line), not comma-separated. */
      whole?: boolean;
      /** What is wrong with one item, e.g. `must be …`; undefined when it is fine. */
      checkItem?: (item: string) => string | undefined;
    })
  /** A duration such as `90s`, `10m`, `2h`; its value is in milliseconds, at least `min` when set. */
  | (FlagBase & { type: 'duration'; value: string; min?: number });

export type FlagSpecs = Record<string, FlagSpec>;

type OptionalValue<S extends FlagSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['type'] extends 'string'
    ? string | undefined
    : S['type'] extends 'list'
      ? string[] | undefined
      : number | undefined;

/** A required flag always has its value by the time a handler runs. */
type FlagValue<S extends FlagSpec> = S extends { required: true }
  ? NonNullable<OptionalValue<S>>
  : OptionalValue<S>;

export type FlagValues<F extends FlagSpecs> = { [N in keyof F]: FlagValue<F[N]> };

/**
 * A positional argument and the form it must have (`pool`: a slug; `token`: `jt_…`; `condition`:
 * a condition type such as `GpuXidError`; `action`: an agent action's name; `command`: `cmd_…`).
 */
export interface Operand {
  name: string;
  type: 'node' | 'op' | 'pool' | 'token' | 'key' | 'condition' | 'artifact' | 'action' | 'command';
}

export type OperandValues<O extends readonly Operand[]> = { [N in O[number]['name']]: string };

/** A command as the parser sees it; each binary adds its handler (`run`) with its own context. */
export interface CommandDef<
  F extends FlagSpecs = FlagSpecs,
  O extends readonly Operand[] = readonly Operand[],
> {
  /** The words that name it, e.g. `['nodes', 'drain']`, `['nodes', 'maintenance', 'clear']`, `['join']`. */
  words: readonly string[];
  summary: string;
  operands: O;
  flags: F;
  /**
   * Rules across flags (one of two required, a key in both, a missing `--yes`): throws a
   * `UsageError`. Runs while the line is parsed, so a refused line never reaches the API.
   */
  check?(input: { args: OperandValues<O>; flags: FlagValues<F> }): void;
}

/** A binary: its name, its global flags, its commands and what its exit codes mean. */
export interface Program<C extends CommandDef = CommandDef, G extends FlagSpecs = FlagSpecs> {
  name: string;
  /** One line: what the binary is. */
  about: string;
  /** What the first word names: `command group` for drydock (`nodes`, `pools`…), else `command`. */
  firstWord: string;
  /** Flags every command takes; before the command words, only these may come. */
  globals: G;
  commands: readonly C[];
  exitCodes: readonly (readonly [code: number, meaning: string])[];
  /** Put before the message of a usage error, e.g. `usage: `. */
  usageLabel: string;
}

export type Env = Record<string, string | undefined>;
