import { DEFAULT_LIVENESS, HEARTBEAT_FLUSH_EVERY_MS } from '../domain/liveness';
import type { Db } from '../db/client';
import { silentLogger, type Logger } from '../observability/log';
import { connectNode, flushLastSeen, sayGoodbye } from '../db/liveness';

export interface HeartbeatOptions {
  flushEveryMs?: number;
  sessionTimeoutMs?: number;
  /** Told of every flush that wrote: how many nodes, and how long its statement took. */
  onFlush?: (flush: { rows: number; durationMs: number }) => void;
  /** Where a failed flush is reported (unset: nowhere; it is retried either way). */
  log?: Logger;
}

/**
 * Last-seen times of this API process's agents, held in memory and flushed to Postgres in one
 * batch every 15 s (docs/lifecycle/liveness.md). A heartbeat after a silence longer than the session
 * timeout starts a new session: one `connect` transaction (`node.connected`).
 */
export class Heartbeats {
  /** Epoch ms of each node's last beat. */
  private lastSeen = new Map<string, number>();
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly options: HeartbeatOptions = {},
  ) {}

  start(): void {
    this.timer ??= setInterval(
      () => void this.flush().catch((error: unknown) => this.logFlushFailure(error)),
      this.options.flushEveryMs ?? HEARTBEAT_FLUSH_EVERY_MS,
    );
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush().catch((error: unknown) => this.logFlushFailure(error));
  }

  /**
   * Records a heartbeat (`now`: epoch ms). A goodbye, or a beat that starts a session, runs its
   * transaction: the promise returned is that. The beat of a live session, nearly every one, has
   * nothing to wait for and returns none.
   */
  beat(nodeId: string, state: 'running' | 'offline', now = Date.now()): Promise<unknown> | undefined {
    if (state === 'offline') {
      this.lastSeen.delete(nodeId);
      this.pending.delete(nodeId);
      return sayGoodbye(this.db, nodeId, new Date(now));
    }
    const previous = this.lastSeen.get(nodeId);
    this.lastSeen.set(nodeId, now);
    this.pending.set(nodeId, now);
    const sessionTimeout = this.options.sessionTimeoutMs ?? DEFAULT_LIVENESS.sessionTimeoutMs;
    if (previous === undefined || now - previous > sessionTimeout) {
      return connectNode(this.db, nodeId, new Date(now));
    }
    return undefined;
  }

  /** Forgets a node's session (blocked, revoked, deleted): its next heartbeat connects anew. */
  forget(nodeId: string): void {
    this.lastSeen.delete(nodeId);
  }

  /** Writes every pending last-seen time in one statement. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const started = performance.now();
    try {
      await flushLastSeen(this.db, batch);
    } catch (error) {
      // Keep the times for the next flush; newer beats of the same node win.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      throw error;
    }
    this.options.onFlush?.({ rows: batch.size, durationMs: performance.now() - started });
  }

  private logFlushFailure(error: unknown): void {
    (this.options.log ?? silentLogger()).warn({ err: error }, 'heartbeat flush failed, will retry');
  }
}
