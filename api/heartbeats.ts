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

/** How soon a timed flush that failed is tried again. */
const FLUSH_RETRY_MS = 1_000;

/** A node's session in this process: its last beat (epoch ms), and whether the next flush owes it. */
interface Session {
  at: number;
  queued: boolean;
}

/**
 * Last-seen times of this API process's agents, held in memory and flushed to Postgres in one
 * batch every 15 s (docs/lifecycle/liveness.md). A heartbeat after a silence longer than the session
 * timeout starts a new session: one `connect` transaction (`node.connected`).
 */
export class Heartbeats {
  private sessions = new Map<string, Session>();
  /** The sessions whose last beat is not written yet, each once: what the next flush writes. */
  private pending = new Map<string, Session>();
  private timer: NodeJS.Timeout | null = null;
  /** A flush that failed is tried again this soon, not a whole interval later. */
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly options: HeartbeatOptions = {},
  ) {}

  start(): void {
    this.timer ??= setInterval(
      () => this.flushOrRetry(),
      this.options.flushEveryMs ?? HEARTBEAT_FLUSH_EVERY_MS,
    );
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = this.retry = null;
    await this.flush().catch((error: unknown) => this.logFlushFailure(error));
  }

  /**
   * A timed flush. One that fails (Postgres away, a connection it closed) is tried again every
   * `FLUSH_RETRY_MS` until one goes through: waiting a whole interval would leave the nodes' times
   * two intervals old, and a sweep could take them for silent.
   */
  private flushOrRetry(): void {
    void this.flush().then(
      () => {
        if (this.retry) clearTimeout(this.retry);
        this.retry = null;
      },
      (error: unknown) => {
        this.logFlushFailure(error);
        if (this.timer && !this.retry) {
          this.retry = setTimeout(() => {
            this.retry = null;
            this.flushOrRetry();
          }, FLUSH_RETRY_MS);
        }
      },
    );
  }

  /**
   * Records a heartbeat (`now`: epoch ms). A goodbye, or a beat that starts a session, runs its
   * transaction: the promise returned is that. The beat of a live session, nearly every one, has
   * nothing to wait for and returns none; it costs one map lookup (its session is queued for the
   * flush by its first beat since the last one).
   */
  beat(nodeId: string, state: 'running' | 'offline', now = Date.now()): Promise<unknown> | undefined {
    if (state === 'offline') {
      this.sessions.delete(nodeId);
      this.pending.delete(nodeId);
      return sayGoodbye(this.db, nodeId, new Date(now));
    }
    const session = this.sessions.get(nodeId);
    const sessionTimeout = this.options.sessionTimeoutMs ?? DEFAULT_LIVENESS.sessionTimeoutMs;
    if (session !== undefined && now - session.at <= sessionTimeout) {
      session.at = now;
      if (!session.queued) {
        session.queued = true;
        this.pending.set(nodeId, session);
      }
      return undefined;
    }
    // A new session in place of any earlier one, which a flush still owed drops for this one.
    const fresh = { at: now, queued: true };
    this.sessions.set(nodeId, fresh);
    this.pending.set(nodeId, fresh);
    return connectNode(this.db, nodeId, new Date(now));
  }

  /** Forgets a node's session (blocked, revoked, deleted): its next heartbeat connects anew. */
  forget(nodeId: string): void {
    this.sessions.delete(nodeId);
  }

  /** Writes every pending last-seen time in one statement. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const times = new Map<string, number>();
    for (const [id, session] of batch) {
      // A beat from here on queues its session again, for the next flush.
      session.queued = false;
      times.set(id, session.at);
    }
    const started = performance.now();
    let closed: string[];
    try {
      closed = await flushLastSeen(this.db, times);
    } catch (error) {
      // Keep them for the next flush; a node that beat meanwhile is queued already, at its newer time.
      for (const [id, session] of batch) {
        if (this.pending.has(id)) continue;
        session.queued = true;
        this.pending.set(id, session);
      }
      throw error;
    }
    // Sessions a sweep closed while this process could not write their beats: the next beat of
    // each starts a new one (`node.connected`), or the node would stay unreachable while it beats.
    for (const id of closed) this.forget(id);
    this.options.onFlush?.({ rows: times.size, durationMs: performance.now() - started });
  }

  private logFlushFailure(error: unknown): void {
    (this.options.log ?? silentLogger()).warn({ err: error }, 'heartbeat flush failed, will retry');
  }
}
