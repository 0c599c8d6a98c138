import { describe, expect, it } from 'vitest';
import { isId } from './ids';
import { derivedUlid, ulidFrom } from './ulid';

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

describe('derivedUlid', () => {
  it("keeps the base's time, is the same for the same inputs, and differs per salt", () => {
    const base = '01m8s08swwkmb5wy0v6fq0vxcs';
    const ids = Array.from({ length: 5000 }, (_, i) => derivedUlid(base, `node_${i}`));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 50)) {
      expect(isId('op', `op_${id}`)).toBe(true);
      expect(id.slice(0, 10)).toBe(base.slice(0, 10));
    }
    expect(derivedUlid(base, 'node_7')).toBe(ids[7]);
    expect(derivedUlid('01m8s08swwkmb5wy0v6fq0vxct', 'node_7')).not.toBe(ids[7]);
  });
});
