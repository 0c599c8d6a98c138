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

/** Bad flags or operands, found before any request is sent (exit 2). */
export class UsageError extends CliError {
  constructor(
    message: string,
    /** The command whose help the hint points at, e.g. `nodes drain`. */
    readonly helpFor?: string,
  ) {
    super('usage', message, 2);
    this.name = 'UsageError';
  }
}

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
