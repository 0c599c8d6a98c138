import { describe, expect, it } from 'vitest';
import { Backoff, BACKOFF_CAP_MS, sleep } from './backoff';

describe('Backoff', () => {
  it('doubles from the base, jitters within the upper half, and never exceeds the cap', () => {
    const low = new Backoff({ random: () => 0 });
    const high = new Backoff({ random: () => 1 });
    expect(Array.from({ length: 6 }, () => low.next())).toEqual([125, 250, 500, 1000, 2000, 2500]);
    expect(Array.from({ length: 6 }, () => high.next())).toEqual([250, 500, 1000, 2000, 4000, 5000]);
    const many = new Backoff();
    for (let i = 0; i < 200; i++) expect(many.next()).toBeLessThanOrEqual(BACKOFF_CAP_MS);
  });

  it('starts over after reset', () => {
    const backoff = new Backoff({ random: () => 1 });
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(250);
  });
});

describe('sleep', () => {
  it('ends early when aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const slept = sleep(10_000, controller.signal);
    controller.abort();
    await slept;
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
