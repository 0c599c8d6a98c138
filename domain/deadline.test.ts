import { describe, expect, it } from 'vitest';
import { deadlineOf, parseDeadline } from './deadline';

const NOW = Date.parse('2026-12-01T12:00:00Z');

describe('parseDeadline', () => {
  it('reads an RFC 3339 time ahead (normalised to UTC) or a duration', () => {
    expect(parseDeadline('2026-12-01T18:00:00+01:00', NOW)).toEqual({
      deadline: { at: '2026-12-01T17:00:00.000Z' },
    });
    expect(parseDeadline('2h', NOW)).toEqual({ deadline: { after: '2h', afterMs: 7_200_000 } });
  });

  it('refuses a time passed or more than 30 days away, a zero or too long duration, and anything else', () => {
    for (const text of [
      '2026-12-01T11:59:59Z',
      '2027-01-01T12:00:01Z',
      '0',
      '31d',
      'tomorrow',
      '2026-12-01',
      '2h30m',
    ]) {
      expect(parseDeadline(text, NOW), text).toHaveProperty('problem');
    }
  });
});

describe('deadlineOf', () => {
  it('is the time itself, or the grace counted from the drain start', () => {
    expect(deadlineOf({ at: '2026-12-01T17:00:00.000Z' }, NOW)).toBe('2026-12-01T17:00:00.000Z');
    expect(deadlineOf({ after: '2h', afterMs: 7_200_000 }, NOW)).toBe('2026-12-01T14:00:00.000Z');
  });
});
