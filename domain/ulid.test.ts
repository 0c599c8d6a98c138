import { describe, expect, it } from 'vitest';
import { isId } from './ids';
import { ulidFrom } from './ulid';

describe('ulidFrom', () => {
  it('makes ids of the project form, ordered by time, the same for the same inputs', () => {
    const seq = (seed: number) => {
      let x = seed;
      return () => (x = (x * 9301 + 49297) % 233280) / 233280;
    };
    const a = `op_${ulidFrom(1_700_000_000_000, seq(1))}`;
    expect(isId('op', a)).toBe(true);
    expect(`op_${ulidFrom(1_700_000_000_000, seq(1))}`).toBe(a);
    expect(ulidFrom(1_700_000_000_001, seq(1)) > ulidFrom(1_700_000_000_000, seq(1))).toBe(true);
    expect(ulidFrom(0, () => 0.999999)).toBe('0000000000zzzzzzzzzzzzzzzz');
  });
});
