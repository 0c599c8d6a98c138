import { describe, expect, it } from 'vitest';
import { expandHostlist } from './hostlist';

describe('expandHostlist', () => {
  it('keeps a plain name, and expands ranges and lists with their zero padding', () => {
    expect(expandHostlist('gpu-b7-01')).toEqual(['gpu-b7-01']);
    expect(expandHostlist('gpu-b7-[01-03,07]')).toEqual(['gpu-b7-01', 'gpu-b7-02', 'gpu-b7-03', 'gpu-b7-07']);
    expect(expandHostlist('n[8-10]x,login1')).toEqual(['n8x', 'n9x', 'n10x', 'login1']);
    expect(expandHostlist('')).toEqual([]);
  });

  it('refuses what it cannot read rather than guess', () => {
    expect(() => expandHostlist('n[1-')).toThrow("'[' without ']'");
    expect(() => expandHostlist('n[a-b]')).toThrow("bad range 'a-b'");
  });
});
