import { DrydockError } from './errors';
import { parseDuration } from './duration';

/**
 * When a drain starts force-releasing what is still live: one time (`at`, RFC 3339 in UTC), or a
 * grace (`after`, a duration such as `2h`) that counts from the drain's own start — for a node
 * drain that is the request; for a pool drain, each node's drain start.
 */
export type Deadline = { at: string } | { after: string; afterMs: number };

/** An RFC 3339 date-time with seconds and a zone: `2026-12-01T16:00:00Z`, `…17:00:00.5+01:00`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i;

/** The furthest ahead a deadline may be; one further is a typo (a year for a day). */
export const MAX_DEADLINE_MS = 30 * 86_400_000;

/**
 * A deadline as a caller writes it, or why it is none: a time must not have passed and lie within
 * 30 days of `now`; a duration is at most 30d (`0s`: at once).
 */
export function parseDeadline(text: string, now: number): { deadline: Deadline } | { problem: string } {
  if (RFC3339.test(text)) {
    const at = Date.parse(text);
    if (!Number.isFinite(at)) return { problem: `${text} is not a valid time` };
    if (at < now) return { problem: `${text} is in the past` };
    if (at - now > MAX_DEADLINE_MS) return { problem: `${text} is more than 30 days ahead` };
    return { deadline: { at: new Date(at).toISOString() } };
  }
  const ms = parseDuration(text);
  if (ms === null || ms < 0) {
    return { problem: 'must be an RFC 3339 time (2026-12-01T16:00:00Z) or a duration such as 2h' };
  }
  if (ms > MAX_DEADLINE_MS) return { problem: `${text} is more than 30 days ahead` };
  return { deadline: { after: text, afterMs: ms } };
}

/** The time (RFC 3339, UTC) a drain that starts at `startedAt` (epoch ms) must be empty by. */
export function deadlineOf(deadline: Deadline, startedAt: number): string {
  return 'at' in deadline ? deadline.at : new Date(startedAt + deadline.afterMs).toISOString();
}

/** The time a node drain begun `now` force-releases at; INVALID_INPUT when `text` is no deadline. */
export function resolveDeadline(text: string, now: number): string {
  const parsed = parseDeadline(text, now);
  if ('problem' in parsed) {
    throw new DrydockError('INVALID_INPUT', `deadline ${parsed.problem}`, {
      field: 'deadline',
      deadline: text,
    });
  }
  return deadlineOf(parsed.deadline, now);
}
