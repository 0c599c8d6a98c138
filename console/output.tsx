/**
 * What a machine printed is arbitrary text: hono/jsx escapes it as HTML, and this makes what HTML
 * would not show visible. A control character (but tab and newline), a format character that hides
 * or reorders text (bidi controls, zero-width and tag characters; not U+200C and U+200D, which
 * scripts and emoji need), a lone surrogate and a line or paragraph separator are each replaced by
 * a marker naming its code point (`⟨U+202E⟩`), so output can neither reorder the text after it nor
 * hide any of it. The download (`/console/commands/<id>/stdout`) keeps the bytes as they are.
 */
const HIDDEN = /((?![\t\n\u200c\u200d])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}])/u;

/** The marker of one hidden character: its code point, e.g. `U+202E`. */
export function codePointOf(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** `text` split into what shows as it is and the characters shown as markers, in order. */
export function visibleParts(text: string): { text: string; hidden: boolean }[] {
  // split with a capturing group: every odd part is one hidden character.
  return text
    .split(new RegExp(HIDDEN.source, 'gu'))
    .map((part, i) => ({ text: part, hidden: i % 2 === 1 }))
    .filter((part) => part.text !== '');
}

/** Text from a machine in monospace: escaped, each hidden character a visible marker. */
export function MachineText(props: { text: string; id?: string; empty: string }) {
  if (props.text === '') return <p class="muted">{props.empty}</p>;
  const parts = visibleParts(props.text);
  return (
    <pre class="output" id={props.id} dir="ltr">
      {parts.map((part) =>
        part.hidden ? (
          <span class="hidden-char" title={`${codePointOf(part.text)}, not shown as it is`}>
            ⟨{codePointOf(part.text)}⟩
          </span>
        ) : (
          part.text
        ),
      )}
    </pre>
  );
}
