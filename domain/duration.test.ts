import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration';

describe('parseDuration', () => {
  it('reads the units operators write', () => {
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1.5d')).toBe(129_600_000);
  });

  it('refuses anything else', () => {
    for (const text of ['', '10', 'm', '-5m', '10 m', '1h30m', 'soon', '1e3s', '10M']) {
      expect(parseDuration(text), text).toBeNull();
    }
  });
});
