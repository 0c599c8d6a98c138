import { runCommandLine, type Io } from '../cli-kit/run';
import { ApiError, Unreachable } from '@drydock/client';
import { AgentError } from './errors';
import { drydockAgent } from './program';

const processIo: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** Runs one command line; resolves to the exit code: 0 ok, 1 failed, 2 usage, 3 identity invalid. */
export function main(argv: readonly string[], io: Io = processIo, env = process.env): Promise<number> {
  return runCommandLine(
    drydockAgent,
    { argv, io, env },
    ({ command, flags, globals }) => command.run({ flags, io, json: globals.json, env }),
    (error) => {
      const failure = asAgentError(error);
      return { message: failure.message, exitCode: failure.exitCode };
    },
  );
}

function asAgentError(error: unknown): AgentError {
  if (error instanceof AgentError) return error;
  if (error instanceof ApiError || error instanceof Unreachable) return new AgentError(error.message);
  // A bug in the agent itself: the stack is what a bug report needs.
  return new AgentError((error as Error | undefined)?.stack ?? String(error));
}
