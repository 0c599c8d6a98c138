import { describe, expect, it } from 'vitest';
import { isStorm, ladderFor, unhealthyAllowance } from './remediation';

describe('remediation rules', () => {
  it('uses the configured ladder of a condition type, else the default', () => {
    expect(ladderFor('GpuXidError')).toEqual(['reset-accelerator', 'reboot']);
    expect(ladderFor('NicFlap', { NicFlap: ['reset-nic', 'reboot'] })).toEqual(['reset-nic', 'reboot']);
  });

  it('reads maxUnhealthy as a count or a percent of live nodes, 40% by default', () => {
    expect(unhealthyAllowance(undefined, 10)).toBe(4);
    expect(unhealthyAllowance('25%', 8)).toBe(2);
    expect(unhealthyAllowance(3, 100)).toBe(3);
  });

  it('is a storm only above the allowance, counting the node that just reported', () => {
    expect(isStorm(4, 10)).toBe(false);
    expect(isStorm(5, 10)).toBe(true);
    // 40% of 7 is 2.8: two nodes are within it, three are above it.
    expect(isStorm(2, 7)).toBe(false);
    expect(isStorm(3, 7)).toBe(true);
    expect(isStorm(3, 7, '50%')).toBe(false);
    expect(isStorm(1, 1, 0)).toBe(true);
  });
});
