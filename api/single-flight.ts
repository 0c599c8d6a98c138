import { DrydockError } from '../domain/errors';

/**
 * Concurrent calls with one caller's Idempotency-Key in this process (`key` names both) share the
 * first call's work. A call that brings the same key with another request hash is
 * IDEMPOTENCY_KEY_REUSED.
 */
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, { hash: string; promise: Promise<T> }>();

  async run(key: string, hash: string, work: () => Promise<T>): Promise<{ result: T; leader: boolean }> {
    const running = this.inFlight.get(key);
    if (running) {
      if (running.hash !== hash) {
        throw new DrydockError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request');
      }
      return { result: await running.promise, leader: false };
    }
    const promise = work().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, { hash, promise });
    return { result: await promise, leader: true };
  }
}
