import { ApiError, Unreachable } from '@drydock/client';
import { runCommandLine, type Io } from '../cli-kit/run';
import { drydockBridge } from './program';

const processIo: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Runs one command line; resolves to the exit code: 0 stopped, 1 failed, 2 usage. */
export function main(argv: readonly string[], io: Io = processIo, env = process.env): Promise<number> {
  return runCommandLine(
    drydockBridge,
    { argv, io, env },
    ({ command, flags, globals }) => command.run({ flags, io, json: globals.json, env }),
    (error) => ({
      message:
        error instanceof ApiError || error instanceof Unreachable
          ? error.message
          : ((error as Error | undefined)?.stack ?? String(error)),
      exitCode: 1,
    }),
  );
}
