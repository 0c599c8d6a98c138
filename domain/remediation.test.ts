import { describe, expect, it } from 'vitest';
import { isStorm, remediationPlan, unhealthyAllowance } from './remediation';

describe('remediation rules', () => {
  it('resolves a plan from the pool policy of the condition type, the defaults for the rest', () => {
    expect(remediationPlan('GpuXidError')).toEqual({
      ladder: ['reset-accelerator', 'reboot'],
      attemptTimeoutMs: 600_000,
      healthyAfterMs: 60_000,
    });
    const policy = { NicFlap: { ladder: ['reset-nic'], attemptTimeout: '90s', healthyAfter: '0' } };
    expect(remediationPlan('NicFlap', policy)).toEqual({
      ladder: ['reset-nic'],
      attemptTimeoutMs: 90_000,
      healthyAfterMs: 0,
    });
    expect(remediationPlan('GpuXidError', { GpuXidError: { healthyAfter: '5m' } })).toMatchObject({
      ladder: ['reset-accelerator', 'reboot'],
      healthyAfterMs: 300_000,
    });
    // Only the policy's own keys: nothing inherited from Object.prototype.
    expect(remediationPlan('constructor', {}).ladder).toEqual(['reset-accelerator', 'reboot']);
  });

  it('reads maxUnhealthy as a count or a percent of live nodes, 40% by default', () => {
    expect(unhealthyAllowance(undefined, 10)).toBe(4);
    expect(unhealthyAllowance('25%', 8)).toBe(2);
    expect(unhealthyAllowance(3, 100)).toBe(3);
  });

  it('is a storm only above the allowance, counting the node that just reported, with another remediating', () => {
    expect(isStorm(4, 10, undefined, 3)).toBe(false);
    expect(isStorm(5, 10, undefined, 4)).toBe(true);
    // 40% of 7 is 2.8: two nodes are within it, three are above it.
    expect(isStorm(2, 7, undefined, 1)).toBe(false);
    expect(isStorm(3, 7, undefined, 2)).toBe(true);
    expect(isStorm(3, 7, '50%', 2)).toBe(false);
    // One at a time is always allowed: a pool of one (or any pool with none remediating).
    expect(isStorm(1, 1, 0, 0)).toBe(false);
    expect(isStorm(1, 1, undefined, 0)).toBe(false);
    expect(isStorm(2, 2, undefined, 1)).toBe(true);
    // Unhealthy nodes that are not remediating (escalated, in maintenance) do not make one run a storm.
    expect(isStorm(6, 10, undefined, 0)).toBe(false);
  });
});
