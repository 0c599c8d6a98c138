import type { Io } from './run';
import type { CommandDef, Env, FlagSpecs, FlagValues } from './spec';

/**
 * Commands of a program whose commands are one word each and take flags only (`drydock-agent`,
 * `drydock-bridge`): what a handler gets, and how a command is defined for the program's table.
 */
export interface WordContext<F extends FlagSpecs> {
  flags: FlagValues<F>;
  /** `--json`: machine output, JSON on stdout and JSON log lines on stderr. */
  json: boolean;
  io: Io;
  env: Env;
}

export interface WordCommandSpec<F extends FlagSpecs> extends CommandDef<F, readonly []> {
  words: readonly [string];
  /** Resolves to the exit code. */
  run(ctx: WordContext<F>): Promise<number>;
}

export type WordCommand = WordCommandSpec<FlagSpecs>;

/** A command for a program's table; keeps its handler's flags typed. */
export function defineWordCommand<const F extends FlagSpecs>(spec: WordCommandSpec<F>): WordCommand {
  return spec as unknown as WordCommand;
}
