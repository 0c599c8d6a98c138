import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DrydockError } from './errors';
import { deadlineOf, MAX_DEADLINE_MS, parseDeadline, resolveDeadline } from './deadline';

const NOW = Date.parse('2026-12-01T12:00:00Z');

function refusal(text: string): string | undefined {
  try {
    resolveDeadline(text, NOW);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(DrydockError);
    expect((error as DrydockError).code).toBe('INVALID_INPUT');
    return (error as DrydockError).message;
  }
}

describe('parseDeadline', () => {
  it('reads an RFC 3339 time (normalised to UTC) or a duration kept as a grace', () => {
    expect(parseDeadline('2026-12-01T18:00:00+01:00', NOW)).toEqual({
      deadline: { at: '2026-12-01T17:00:00.000Z' },
    });
    expect(parseDeadline('2h', NOW)).toEqual({ deadline: { after: '2h', afterMs: 7_200_000 } });
  });
});

describe('deadlineOf', () => {
  it('is the time itself, or the grace counted from the drain start', () => {
    expect(deadlineOf({ at: '2026-12-01T17:00:00.000Z' }, NOW)).toBe('2026-12-01T17:00:00.000Z');
    expect(deadlineOf({ after: '2h', afterMs: 7_200_000 }, NOW)).toBe('2026-12-01T14:00:00.000Z');
  });
});

describe('resolveDeadline', () => {
  it('resolves a duration from now, 0s being now', () => {
    expect(resolveDeadline('2h', NOW)).toBe('2026-12-01T14:00:00.000Z');
    expect(resolveDeadline('90m', NOW)).toBe('2026-12-01T13:30:00.000Z');
    expect(resolveDeadline('0s', NOW)).toBe('2026-12-01T12:00:00.000Z');
    expect(resolveDeadline('0', NOW)).toBe('2026-12-01T12:00:00.000Z');
    expect(resolveDeadline('30d', NOW)).toBe('2026-12-31T12:00:00.000Z');
  });

  it('resolves an RFC 3339 time with Z or an offset to UTC', () => {
    expect(resolveDeadline('2026-12-01T16:00:00Z', NOW)).toBe('2026-12-01T16:00:00.000Z');
    expect(resolveDeadline('2026-12-01T17:00:00.250+01:00', NOW)).toBe('2026-12-01T16:00:00.250Z');
  });

  it('refuses what is not a time, is past, or is more than 30 days ahead', () => {
    expect(refusal('soon')).toMatch(/RFC 3339/);
    expect(refusal('tomorrow')).toMatch(/RFC 3339/);
    expect(refusal('2h30m')).toMatch(/RFC 3339/);
    expect(refusal('-1h')).toMatch(/RFC 3339/);
    expect(refusal('2026-12-01T16:00:00')).toMatch(/RFC 3339/); // no zone
    expect(refusal('2026-12-01')).toMatch(/RFC 3339/);
    expect(refusal('2026-13-01T00:00:00Z')).toMatch(/valid time/);
    expect(refusal('2026-12-01T11:59:59Z')).toMatch(/past/);
    expect(refusal('31d')).toMatch(/30 days/);
    expect(refusal('2027-01-01T12:00:01Z')).toMatch(/30 days/);
  });

  it('answers a time within [now, now + 30d] for any duration it accepts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 * MAX_DEADLINE_MS }), (ms) => {
        const text = `${ms}ms`;
        if (ms > MAX_DEADLINE_MS) expect(refusal(text)).toMatch(/30 days/);
        else expect(Date.parse(resolveDeadline(text, NOW))).toBe(NOW + ms);
      }),
    );
  });
});
