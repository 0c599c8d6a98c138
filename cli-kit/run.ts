import { helpText } from './help';
import { parseCommandLine, type Invocation } from './parse';
import type { CommandDef, Env, FlagSpecs, Program } from './spec';
import { UsageError } from './usage-error';

/** Where a command line writes (tests pass their own). */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** A command line of a program, and where it runs. */
export interface Line<I extends Io> {
  argv: readonly string[];
  io: I;
  env: Env;
}

/**
 * Runs one command line of `program`: prints help, or runs the command the line names once all of
 * it is checked. A usage error (from the line or a handler) says which help to read and exits 2;
 * `failure` says how any other error is reported. Resolves to the exit code.
 */
export async function runCommandLine<C extends CommandDef, G extends FlagSpecs, I extends Io>(
  program: Program<C, G>,
  { argv, io, env }: Line<I>,
  run: (invocation: Extract<Invocation<C, G>, { kind: 'run' }>) => Promise<number>,
  failure: (error: unknown) => { message: string; exitCode: number },
): Promise<number> {
  try {
    const invocation = parseCommandLine(program, argv, env);
    if (invocation.kind === 'help') {
      io.stdout(`${helpText(program, invocation.topic)}\n`);
      return 0;
    }
    return await run(invocation);
  } catch (error) {
    if (error instanceof UsageError) {
      const help = [program.name, error.helpFor, '--help'].filter(Boolean).join(' ');
      io.stderr(`error: ${program.usageLabel}${error.message}\nrun '${help}' for usage\n`);
      return error.exitCode;
    }
    const { message, exitCode } = failure(error);
    io.stderr(`error: ${message}\n`);
    return exitCode;
  }
}
