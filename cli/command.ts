import type { ApiClient } from './client';
import type { Output } from './output';

interface FlagBase {
  help: string;
  /** Another flag this one only makes sense with, e.g. `--timeout` needs `--wait`. */
  requires?: string;
  /** The line is refused without it, e.g. `token create --ttl`; help shows it without brackets. */
  required?: boolean;
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
      /** What is wrong with one item, e.g. `must be …`; undefined when it is fine. */
      checkItem?: (item: string) => string | undefined;
    })
  /** A duration such as `90s`, `10m`, `2h`; its value is in milliseconds. */
  | (FlagBase & { type: 'duration'; value: string });

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

/** A positional argument and the identifier form it must have (`pool`: a slug; `token`: `jt_…`). */
export interface Operand {
  name: string;
  type: 'node' | 'op' | 'pool' | 'token' | 'key';
}

export type OperandValues<O extends readonly Operand[]> = { [N in O[number]['name']]: string };

/** What a command's handler gets: checked operands and flags, the API client, the output. */
export interface Context<F extends FlagSpecs, O extends readonly Operand[]> {
  args: OperandValues<O>;
  flags: FlagValues<F>;
  api: ApiClient;
  out: Output;
}

export interface CommandSpec<F extends FlagSpecs, O extends readonly Operand[]> {
  /** The words that name it, e.g. `['nodes', 'drain']` or `['nodes', 'maintenance', 'clear']`. */
  words: readonly [string, string] | readonly [string, string, string];
  summary: string;
  operands: O;
  flags: F;
  /**
   * Rules across flags (one of two required, a key in both, a missing `--yes`): throws a
   * `UsageError`. Runs while the line is parsed, so a refused line never reaches the API.
   */
  check?(input: Pick<Context<F, O>, 'args' | 'flags'>): void;
  /** Resolves to the exit code; 0 when it returns nothing. */
  run(ctx: Context<F, O>): Promise<number | void>;
}

export type Command = CommandSpec<FlagSpecs, readonly Operand[]>;

/** A command for the table in `commands/index.ts`; keeps its handler's flags typed. */
export function defineCommand<const F extends FlagSpecs, const O extends readonly Operand[]>(
  spec: CommandSpec<F, O>,
): Command {
  return spec as unknown as Command;
}
