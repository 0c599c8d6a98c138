import { parseDuration } from './duration';

/**
 * When a drain starts force-releasing what is still live: one time (`at`, RFC 3339 in UTC), or a
 * grace (`after`, a duration such as `2h`) that counts from the drain's own start.
 */
export type Deadline = { at: string } | { after: string; afterMs: number };

/** An RFC 3339 date-time with seconds and an offset (`Z` or `±hh:mm`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** The longest grace a drain takes: beyond a month is a typo. */
export const MAX_DEADLINE_MS = 30 * 86_400_000;

/**
 * A deadline as a caller writes it, or why it is none: a time must lie ahead of `now` and within
 * a month of it, a duration must be more than 0 and at most 30d.
 */
export function parseDeadline(text: string, now: number): { deadline: Deadline } | { problem: string } {
  if (RFC3339.test(text)) {
    const at = Date.parse(text);
    if (!Number.isFinite(at)) return { problem: `${text} is not a valid time` };
    if (at <= now) return { problem: `${text} has already passed` };
    if (at - now > MAX_DEADLINE_MS) return { problem: `${text} is more than 30 days away` };
    return { deadline: { at: new Date(at).toISOString() } };
  }
  const ms = parseDuration(text);
  if (ms === null) return { problem: 'is an RFC 3339 time (2026-12-01T18:00:00Z) or a duration such as 2h' };
  if (ms <= 0 || ms > MAX_DEADLINE_MS) return { problem: 'a duration is more than 0 and at most 30d' };
  return { deadline: { after: text, afterMs: ms } };
}

/** The time a drain that starts at `startedAt` (epoch ms) must be empty by, RFC 3339. */
export function deadlineOf(deadline: Deadline, startedAt: number): string {
  return 'at' in deadline ? deadline.at : new Date(startedAt + deadline.afterMs).toISOString();
}
