import { ApiError, Unreachable } from '@drydock/client';
import type { Log } from './log';

/** How the control plane last answered: accepted, refused as blocked, or not at all. */
type State = 'unknown' | 'ok' | 'blocked' | 'unreachable' | 'failing';

/**
 * What a session's calls found of the control plane, logged when it is news: the first contact,
 * once per outage or block (not once per retry), and the way back.
 */
export class Reach {
  private state: State = 'unknown';

  constructor(
    private readonly api: string,
    private readonly nodeId: string,
    private readonly log: Log,
  ) {}

  /** A call succeeded; true when it is the way back after failed calls (a reconnect). */
  reached(): boolean {
    const was = this.state;
    this.state = 'ok';
    if (was === 'ok') return false;
    if (was === 'unknown') this.log('info', `connected to ${this.api} as ${this.nodeId}`);
    else if (was === 'blocked') this.log('info', 'unblocked: the control plane accepts this node again');
    else this.log('info', `reconnected to ${this.api}`);
    return was !== 'unknown';
  }

  /**
   * Classifies a failed call: `revoked` when the identity is not accepted (401, which no retry can
   * fix), else `retry` — a block (403), no answer, an error answer, or a bug, each logged as news.
   */
  failed(error: unknown): 'revoked' | 'retry' {
    if (error instanceof ApiError && error.status === 401) return 'revoked';
    if (error instanceof ApiError && error.status === 403) {
      this.change('blocked', `blocked by the control plane; retrying (${error.message})`);
    } else if (error instanceof Unreachable) {
      this.change('unreachable', `${error.message}; retrying`);
    } else if (error instanceof ApiError) {
      this.change(
        'failing',
        `the control plane answered ${error.status} ${error.code}: ${error.message}; retrying`,
      );
    } else {
      this.log('error', `unexpected failure: ${(error as Error)?.stack ?? String(error)}; retrying`);
    }
    return 'retry';
  }

  private change(state: State, message: string): void {
    if (this.state === state) return;
    this.state = state;
    this.log('warn', message);
  }
}
