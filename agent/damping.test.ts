import { describe, expect, it } from 'vitest';
import { DampedCondition, type ProbeVerdict } from './damping';

const FAULT: ProbeVerdict = { healthy: false, reason: 'xid-79' };
const HEALTHY: ProbeVerdict = { healthy: true };

/** A condition the API has heard as a fault, with `healthyAfterSeconds` in its answer. */
function faulted(healthyAfterSeconds: number, at = 0): DampedCondition {
  const condition = new DampedCondition();
  condition.observe(FAULT, at);
  const report = condition.due()!;
  expect(report).toEqual({ status: true, reason: 'xid-79' });
  condition.took(report, healthyAfterSeconds);
  return condition;
}

describe('DampedCondition', () => {
  it('reports a fault at once, and once: the same fault again is no news', () => {
    const condition = faulted(60);
    condition.observe(FAULT, 1_000);
    expect(condition.due()).toBeNull();
  });

  it('reports a clear only once the probe has held healthy for healthyAfter', () => {
    const condition = faulted(10);
    expect(condition.observe(HEALTHY, 1_000)).toBe('clearing');
    expect(condition.due()).toBeNull();
    expect(condition.observe(HEALTHY, 10_999)).toBeNull();
    expect(condition.due()).toBeNull();
    condition.observe(HEALTHY, 11_000);
    expect(condition.due()).toEqual({ status: false });
    condition.took({ status: false }, 10);
    condition.observe(HEALTHY, 12_000);
    expect(condition.due()).toBeNull();
  });

  it('a probe flapping faster than healthyAfter never reports a clear', () => {
    const condition = faulted(60);
    // Healthy for 50 s, faulty for a moment, over and over for an hour.
    for (let t = 1_000; t < 3_600_000; t += 51_000) {
      condition.observe(HEALTHY, t);
      condition.observe(HEALTHY, t + 49_999);
      expect(condition.due()).toBeNull();
      condition.observe(FAULT, t + 50_000);
      expect(condition.due()).toBeNull();
    }
  });

  it('a fault during the wait starts it over', () => {
    const condition = faulted(60);
    condition.observe(HEALTHY, 0);
    condition.observe(FAULT, 59_000);
    expect(condition.observe(HEALTHY, 60_000)).toBe('clearing');
    condition.observe(HEALTHY, 119_999);
    expect(condition.due()).toBeNull();
    condition.observe(HEALTHY, 120_000);
    expect(condition.due()).toEqual({ status: false });
  });

  it('waits 60 s until the API has answered, then as long as its last answer says', () => {
    const fresh = new DampedCondition();
    expect(fresh.observe(HEALTHY, 0)).toBe('clearing');
    fresh.observe(HEALTHY, 59_999);
    expect(fresh.due()).toBeNull();
    fresh.observe(HEALTHY, 60_000);
    expect(fresh.due()).toEqual({ status: false });

    const answered = faulted(5);
    answered.observe(HEALTHY, 0);
    answered.observe(HEALTHY, 5_000);
    expect(answered.due()).toEqual({ status: false });
  });

  it('after resend the current status is due again, a pending clear still pending', () => {
    const condition = faulted(60);
    condition.observe(HEALTHY, 1_000);
    condition.resend();
    expect(condition.due()).toEqual({ status: true, reason: 'xid-79' });
    condition.took({ status: true, reason: 'xid-79' }, 60);
    expect(condition.due()).toBeNull();
    condition.observe(HEALTHY, 61_000);
    expect(condition.due()).toEqual({ status: false });
  });

  it('a report the API did not take stays due', () => {
    const condition = new DampedCondition();
    condition.observe(FAULT, 0);
    expect(condition.due()).toEqual({ status: true, reason: 'xid-79' });
    condition.observe(FAULT, 30_000);
    expect(condition.due()).toEqual({ status: true, reason: 'xid-79' });
  });
});
