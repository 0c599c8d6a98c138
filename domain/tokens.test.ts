import { describe, expect, it } from 'vitest';
import { tokenExpiry, usesLeft } from './tokens';

describe('tokenExpiry', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  it('reads durations; only the literal 0 never expires', () => {
    expect(tokenExpiry('0', now)).toBeNull();
    expect(tokenExpiry('24h', now)?.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(tokenExpiry('30m', now)?.toISOString()).toBe('2026-01-01T00:30:00.000Z');
  });
  it('refuses zero-length, absurd and malformed ttls', () => {
    for (const ttl of ['0s', '0h', '0.0001ms', '999999999d', '3651d', 'soon', '', '-1h']) {
      expect(() => tokenExpiry(ttl, now), ttl).toThrow(/ttl/);
    }
  });
});

describe('usesLeft', () => {
  it('is null for unlimited tokens', () => {
    expect(usesLeft({ maxUses: 0, uses: 7 })).toBeNull();
    expect(usesLeft({ maxUses: 5, uses: 2 })).toBe(3);
    expect(usesLeft({ maxUses: 1, uses: 3 })).toBe(0);
  });
});
