import { fileURLToPath } from 'node:url';
import { parseCommandLine } from './args';
import { ApiClient } from './client';
import { commands } from './commands';
import { CliError, UsageError } from './errors';
import { resolveGlobals } from './globals';
import { helpText } from './help';
import { Output, processIo, type Io } from './output';

/** Runs one command line; resolves to the process exit code (docs/cli.md). */
export async function main(
  argv: readonly string[],
  io: Io = processIo,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  try {
    const invocation = parseCommandLine(argv, commands);
    if (invocation.kind === 'help') {
      io.stdout(`${helpText(invocation.topic, commands)}\n`);
      return 0;
    }
    const globals = resolveGlobals(invocation.globals, env);
    const { command, args, flags } = invocation;
    const out = new Output(io, globals.json);
    const code = await command.run({ args, flags, api: new ApiClient(globals.api, globals.token), out });
    return code ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      const help = error.helpFor ? `drydock ${error.helpFor} --help` : 'drydock --help';
      io.stderr(`error: usage: ${error.message}\nrun '${help}' for usage\n`);
      return error.exitCode;
    }
    if (error instanceof CliError) {
      io.stderr(`error: ${error.code}: ${error.message}\n`);
      return error.exitCode;
    }
    // A bug in the command line itself: the stack is what a bug report needs.
    io.stderr(`error: INTERNAL: ${(error as Error | undefined)?.stack ?? String(error)}\n`);
    return 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
