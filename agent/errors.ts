/** A failure `drydock-agent` reports as `error: <message>` and exits with `exitCode`. */
export class AgentError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

/** Bad flags or arguments, found before anything is touched (exit 2): one kind for both binaries. */
export { UsageError } from '../cli-kit/usage-error';

/**
 * The control plane no longer accepts this node's identity (revoked, deleted, or never known):
 * retrying cannot help, only joining again can (exit 3).
 */
export class IdentityInvalid extends AgentError {
  constructor(message: string) {
    super(
      `the node identity is no longer valid (${message}); join again with 'drydock-agent join --reset --yes'`,
      3,
    );
    this.name = 'IdentityInvalid';
  }
}
