/** A bad command line, found before anything is sent or touched (exit 2). */
export class UsageError extends Error {
  readonly code = 'usage';
  readonly exitCode = 2;

  constructor(
    message: string,
    /** The command whose help the hint points at, e.g. `nodes drain`; the binary's when unset. */
    readonly helpFor?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}
