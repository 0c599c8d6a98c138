// eslint-disable-next-line no-control-regex -- the characters the API refuses
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` as the API's free-text fields take it (domain/text.ts): control characters — newlines,
 * tabs, escapes from a script's output — become spaces, runs of space one, and it is cut to `max`
 * characters with an ellipsis (never between the halves of a surrogate pair). Empty: `fallback`.
 */
export function freeText(text: string, max: number, fallback: string): string {
  const flat = text.replace(CONTROL, ' ').replace(/ {2,}/g, ' ').trim() || fallback;
  if (flat.length <= max) return flat;
  let end = max - 1;
  const last = flat.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${flat.slice(0, end)}…`;
}

/** The API takes reasons — a refusal, a condition's reason — of up to this many characters. */
export const MAX_REASON = 256;
