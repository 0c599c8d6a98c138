/**
 * Free text — reasons, descriptions, display names, serials, paths — is stored, logged and shown
 * on terminals, so it must be text any of those take: valid UTF-16 (a lone surrogate cannot be
 * encoded as UTF-8 or JSON for Postgres) and no control characters (Unicode Cc: C0 incl. NUL and
 * ESC, DEL, C1), which Postgres refuses (NUL) or a terminal obeys (escape sequences). No free-text
 * field allows one today. Its length bound is the field's own.
 */

/**
 * The rule as a pattern for the OpenAPI document. It means the same with and without the `u` flag
 * (a surrogate pair is one code point, or a high surrogate followed by a low one), so any client's
 * validator reads it alike.
 */
export const TEXT_PATTERN =
  // eslint-disable-next-line no-control-regex -- naming control characters is the rule
  /^(?:[^\u0000-\u001f\u007f-\u009f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;

/** A control character, a high surrogate not followed by a low one, or a low one not after a high. */
const FAULT =
  // eslint-disable-next-line no-control-regex -- naming control characters is the rule
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What makes `value` not free text, naming the character and its index; null when it is text.
 * A search for the first fault rather than TEXT_PATTERN: linear, and no backtracking state per
 * character on long input.
 */
export function textFault(value: string): string | null {
  const fault = FAULT.exec(value);
  if (!fault) return null;
  const unit = fault[0].charCodeAt(0);
  const code = `U+${unit.toString(16).toUpperCase().padStart(4, '0')}`;
  const what = unit >= 0xd800 && unit <= 0xdfff ? 'a lone surrogate' : 'a control character';
  return `${what} (${code}) at index ${fault.index}: free text takes no control characters and must be valid UTF-16`;
}
