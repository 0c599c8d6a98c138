/**
 * Free text — reasons, descriptions, display names, serials, paths — is stored, logged and shown
 * on terminals and in the console, so it must be text any of those take and show as it is: valid
 * UTF-16 (a lone surrogate cannot be encoded as UTF-8 or JSON for Postgres), no control characters
 * (Unicode Cc: C0 incl. NUL and ESC, DEL, C1), which Postgres refuses (NUL) or a terminal obeys
 * (escape sequences), and no format characters that hide or reorder text: bidirectional controls
 * (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), invisible ones (zero-width space, word
 * joiner, soft hyphen, U+FEFF, …: the BMP's Unicode Cf) and tag characters (U+E0000–U+E007F).
 * The zero-width non-joiner and joiner (U+200C, U+200D) stay: scripts and emoji sequences need
 * them. No free-text field allows any of the rest. Its length bound is the field's own.
 */

/** The BMP's format characters (Unicode Cf) but U+200C and U+200D: bidi controls, invisibles. */
const HIDDEN =
  '\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e\\u200b\\u200e\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb';
/** A tag character (U+E0000–U+E007F), as its surrogate pair. */
const TAG = '\\udb40[\\udc00-\\udc7f]';

/**
 * The rule as a pattern for the OpenAPI document, but for tag characters: it means the same with
 * and without the `u` flag (a surrogate pair is one code point, or a high surrogate followed by a
 * low one), so any client's validator reads it alike, and no pattern can name an astral character
 * so that both read it alike. The server refuses tag characters all the same (`textFault`).
 */
export const TEXT_PATTERN = new RegExp(
  `^(?:[^\\u0000-\\u001f\\u007f-\\u009f${HIDDEN}\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])*$`,
);

/**
 * A control character, a hidden format character, a tag character, a high surrogate not followed
 * by a low one, or a low one not after a high.
 */
const FAULT = new RegExp(
  `[\\u0000-\\u001f\\u007f-\\u009f]|[${HIDDEN}]|${TAG}|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]`,
);

/**
 * What makes `value` not free text, naming the character and its index; null when it is text.
 * A search for the first fault rather than TEXT_PATTERN: linear, and no backtracking state per
 * character on long input.
 */
export function textFault(value: string): string | null {
  const fault = FAULT.exec(value);
  if (!fault) return null;
  const point = fault[0].codePointAt(0)!;
  const code = `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
  const what =
    fault[0].length === 1 && point >= 0xd800 && point <= 0xdfff
      ? 'a lone surrogate'
      : point <= 0x9f
        ? 'a control character'
        : 'a format character that hides or reorders text';
  return `${what} (${code}) at index ${fault.index}: free text takes no control characters or hidden format characters and must be valid UTF-16`;
}
