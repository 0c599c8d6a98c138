import { baseUrl } from '../cli-kit/flags';
import { runCommandLine } from '../cli-kit/run';
import { cliClient, cliFailure } from './client';
import { credentialFor } from './credential';
import { CliError } from './errors';
import { DEFAULT_API } from './globals';
import { Output, processIo, type Io } from './output';
import { drydock } from './program';

/** Runs one command line; resolves to the process exit code (docs/cli.md). */
export function main(argv: readonly string[], io: Io = processIo, env = process.env): Promise<number> {
  return runCommandLine(
    drydock,
    { argv, io, env },
    async ({ command, args, flags, globals }) => {
      const connection = { api: baseUrl(globals.api ?? DEFAULT_API) };
      const credential = credentialFor({ api: connection.api, token: globals.token, env });
      const api = cliClient(connection.api, credential);
      const code = await command
        .run({ args, flags, api, credential, out: new Output(io, globals.json), env })
        .catch((error: unknown) => {
          throw cliFailure(error, { ...connection, credential });
        });
      return code ?? 0;
    },
    (error) =>
      error instanceof CliError
        ? { message: `${error.code}: ${error.message}`, exitCode: error.exitCode }
        : // A bug in the command line itself: the stack is what a bug report needs.
          { message: `INTERNAL: ${(error as Error | undefined)?.stack ?? String(error)}`, exitCode: 1 },
  );
}
