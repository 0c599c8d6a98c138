import type { Sql } from 'postgres';
import { NODE_CHANNEL } from '../db/wakeups';

/**
 * Wakes this process's waiters when any API process commits a change an agent must see at once
 * (a queued command, a block, a revoked identity): LISTEN on one connection, fan out in memory.
 * With `EVENTS_CHANNEL` it wakes the event feed's long-polls instead (every payload is '').
 */
export class NodeWakeups {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly watchers = new Set<(nodeId: string) => void>();
  private readonly listenWatchers = new Set<() => void>();
  private listening: { unlisten(): Promise<void> } | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly channel: string = NODE_CHANNEL,
  ) {}

  async start(): Promise<void> {
    this.listening = await this.sql.listen(
      this.channel,
      (nodeId) => this.wake(nodeId),
      // Also after a reconnect, when the NOTIFYs sent while the connection was down are lost.
      () => {
        for (const fn of this.listenWatchers) fn();
      },
    );
  }

  async stop(): Promise<void> {
    await this.listening?.unlisten();
    this.listening = null;
  }

  /** Calls `fn` on the next wake-up of the node; returns the unsubscribe. */
  subscribe(nodeId: string, fn: () => void): () => void {
    let set = this.waiters.get(nodeId);
    if (!set) this.waiters.set(nodeId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.waiters.delete(nodeId);
    };
  }

  /**
   * Listens for the node's next wake-up from now on; the returned `wait` resolves on it (also when
   * it came before `wait` was called) or after `ms`, whichever is first. Arm before reading what
   * the wake-up announces: a change committed between the read and the wait is then not missed.
   * `cancel` stops listening without waiting.
   */
  arm(nodeId: string): { wait(ms: number, signal?: AbortSignal): Promise<void>; cancel(): void } {
    let woken = false;
    let onWake: () => void = () => {
      woken = true;
    };
    const unsubscribe = this.subscribe(nodeId, () => onWake());
    return {
      wait: (ms, signal) =>
        new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            unsubscribe();
            signal?.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, woken || signal?.aborted ? 0 : ms);
          onWake = done;
          signal?.addEventListener('abort', done);
        }),
      cancel: unsubscribe,
    };
  }

  /** How many callers wait on the node's next wake-up here (a long-poll in its wait, for one). */
  waiting(nodeId: string): number {
    return this.waiters.get(nodeId)?.size ?? 0;
  }

  /** How many callers wait on a wake-up of any node here (the long-polls held open, for a gauge). */
  waitingTotal(): number {
    let total = 0;
    for (const set of this.waiters.values()) total += set.size;
    return total;
  }

  /** Calls `fn` with every node woken (caches that must forget what they knew of it). */
  onWake(fn: (nodeId: string) => void): void {
    this.watchers.add(fn);
  }

  /**
   * Calls `fn` each time the LISTEN starts, the first time and after every reconnect: wake-ups
   * sent while the connection was down are lost, so a cache forgets everything it knew.
   */
  onListen(fn: () => void): void {
    this.listenWatchers.add(fn);
  }

  /** Wakes local waiters at once (the change was made by this process; NOTIFY follows for others). */
  wake(nodeId: string): void {
    for (const fn of this.watchers) fn(nodeId);
    for (const fn of [...(this.waiters.get(nodeId) ?? [])]) fn();
  }
}
