import { describe, expect, it } from 'vitest';
import { isId, newId } from './ids';

describe('ids', () => {
  it('mints prefixed lowercase ULIDs that pass their own check', () => {
    const id = newId('node');
    expect(id).toMatch(/^node_[0-9a-z]{26}$/);
    expect(isId('node', id)).toBe(true);
    expect(isId('op', id)).toBe(false);
  });

  it('grow in the order they are minted, many within one millisecond', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('node'));
    expect(new Set(ids.map((id) => id.slice(5, 15))).size).toBeLessThan(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('refuses other forms', () => {
    for (const text of [
      'node_',
      'node_01K5W8V3X9Q2M4N6P8R0S2T4V6',
      'node_01k5w8v3x9q2m4n6p8r0s2t4v',
      'node_01k5w8v3x9q2m4n6p8r0s2t4vu',
      ' node_01k5w8v3x9q2m4n6p8r0s2t4v6',
    ]) {
      expect(isId('node', text), text).toBe(false);
    }
    expect(isId('node', 'node_01k5w8v3x9q2m4n6p8r0s2t4v6')).toBe(true);
  });
});
