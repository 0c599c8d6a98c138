import type { CommandDef, Env, FlagSpecs, FlagValues, Operand, OperandValues } from '../cli-kit/spec';
import type { ApiClient } from './client';
import type { Credential } from './credential';
import type { Output } from './output';

export type { FlagSpec, FlagSpecs, FlagValues, Operand } from '../cli-kit/spec';

/** What a command's handler gets: checked operands and flags, the API client, the output. */
export interface Context<F extends FlagSpecs, O extends readonly Operand[]> {
  args: OperandValues<O>;
  flags: FlagValues<F>;
  api: ApiClient;
  /** Where `api`'s bearer comes from (cli/credential.ts): `whoami` says it, `logout` ends a sign-in. */
  credential: Credential;
  out: Output;
  /** The environment the line runs in: the commands that work beside the API read its configuration. */
  env: Env;
}

export interface CommandSpec<F extends FlagSpecs, O extends readonly Operand[]> extends CommandDef<F, O> {
  /** The words that name it, e.g. `['events']`, `['nodes', 'drain']` or `['nodes', 'maintenance', 'clear']`. */
  words: readonly [string] | readonly [string, string] | readonly [string, string, string];
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
