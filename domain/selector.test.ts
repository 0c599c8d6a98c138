import { describe, expect, it } from 'vitest';
import { formatSelector, parseSelector } from './selector';

describe('parseSelector', () => {
  it('reads KEY=VALUE terms, an empty value included; the empty selector is every node', () => {
    expect(parseSelector('rack=b7,gpu.model=H100')).toEqual({
      selector: { rack: 'b7', 'gpu.model': 'H100' },
    });
    expect(parseSelector('fabric/rail=')).toEqual({ selector: { 'fabric/rail': '' } });
    expect(parseSelector('')).toEqual({ selector: {} });
  });

  it('refuses what the label grammar refuses, and a key named twice', () => {
    for (const text of [
      'rack',
      'rack=b7,',
      ',rack=b7',
      '-rack=b7',
      'rack=b 7',
      'rack=b7,rack=b8',
      '__proto__=x',
    ]) {
      expect(parseSelector(text), text).toHaveProperty('problem');
    }
    expect(parseSelector(Array.from({ length: 65 }, (_, i) => `k${i}=v`).join(','))).toHaveProperty(
      'problem',
    );
  });

  it('writes a selector back with its keys in order', () => {
    expect(formatSelector({ rack: 'b7', 'gpu.model': 'H100' })).toBe('gpu.model=H100,rack=b7');
    expect(formatSelector({})).toBe('');
  });
});
