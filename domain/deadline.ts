import { DrydockError } from './errors';
import { parseDuration } from './duration';

/** The furthest ahead a drain deadline may be; one further is a typo (a year for a day). */
export const MAX_DEADLINE_MS = 30 * 86_400_000;

/** An RFC 3339 time with a zone: `2026-12-01T16:00:00Z`, `2026-12-01T17:00:00.5+01:00`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The absolute time (ISO, UTC) a deadline names: an RFC 3339 time, or a duration from `now`
 * (`2h`, `90m`; `0s` is now). INVALID_INPUT when it is neither, names a time already past, or
 * lies more than 30 days ahead.
 */
export function resolveDeadline(text: string, now: number): string {
  const ms = RFC3339.test(text) ? Date.parse(text) : null;
  const duration = ms === null ? parseDuration(text) : null;
  if (ms === null && duration === null) {
    throw invalid(text, 'must be an RFC 3339 time (2026-12-01T16:00:00Z) or a duration such as 2h');
  }
  const at = ms ?? now + duration!;
  if (Number.isNaN(at)) throw invalid(text, 'is not a valid time');
  if (at < now) throw invalid(text, 'is in the past');
  if (at - now > MAX_DEADLINE_MS) throw invalid(text, 'is more than 30 days ahead');
  return new Date(at).toISOString();
}

function invalid(text: string, why: string): DrydockError {
  return new DrydockError('INVALID_INPUT', `deadline ${why}`, { field: 'deadline', deadline: text });
}
