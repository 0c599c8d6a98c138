/** A failure the command line reports as `error: <CODE>: <message>` and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = exitCodeOf(code),
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Bad flags or operands, found before any request is sent (exit 2): one kind for both binaries. */
export { UsageError } from '../cli-kit/usage-error';

/** The exit code of an API error code (docs/cli.md). */
export function exitCodeOf(code: string): number {
  switch (code) {
    case 'usage':
      return 2;
    case 'CONFLICT':
    case 'INVALID_STATE':
    case 'NOT_SCHEDULABLE':
      return 3;
    case 'NOT_FOUND':
      return 4;
    case 'UNAUTHENTICATED':
    case 'FORBIDDEN':
      return 5;
    default:
      return 1;
  }
}
