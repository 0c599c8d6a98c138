import type { Sql } from 'postgres';
import { describe, expect, it } from 'vitest';
import { NodeWakeups } from './node-events';

// In-memory fan-out only: LISTEN (start) is not needed to wake this process's own waiters.
const wakeups = () => new NodeWakeups(null as unknown as Sql);

describe('NodeWakeups.arm', () => {
  it('a wake-up between arming and waiting is not lost: the wait ends at once', async () => {
    const w = wakeups();
    const armed = w.arm('node_a');
    w.wake('node_a');
    const started = Date.now();
    await armed.wait(10_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(w.waiting('node_a')).toBe(0);
  });

  it('waits for the wake-up of its own node only, and stops listening once done', async () => {
    const w = wakeups();
    const armed = w.arm('node_a');
    let ended = false;
    const waiting = armed.wait(10_000).then(() => (ended = true));
    w.wake('node_b');
    await Promise.resolve();
    expect(ended).toBe(false);
    expect(w.waiting('node_a')).toBe(1);
    w.wake('node_a');
    await waiting;
    expect(w.waiting('node_a')).toBe(0);
  });

  it('cancel stops listening without a wait', () => {
    const w = wakeups();
    w.arm('node_a').cancel();
    expect(w.waiting('node_a')).toBe(0);
  });
});
