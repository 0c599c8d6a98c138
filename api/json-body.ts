import { visit } from 'jsonc-parser';

/**
 * What makes a JSON text mean something other than what it says, or null when nothing does: a
 * name given twice in one object (JSON.parse would keep the last silently), or a number that is
 * not the number written (`-0`; an exponent that underflows to 0 or overflows to Infinity; an
 * integer past 2^53 that rounds to another). Syntax errors are left to the parser that follows.
 * Read with jsonc-parser's visitor, comments and trailing commas counted as errors.
 */
export function misleadingJson(text: string): string | null {
  const objects: Set<string>[] = [];
  let problem: string | null = null;
  visit(
    text,
    {
      onObjectBegin: () => void objects.push(new Set()),
      onObjectEnd: () => void objects.pop(),
      onObjectProperty: (name) => {
        const names = objects[objects.length - 1]!;
        if (names.has(name)) problem ??= `the name ${shown(name)} appears twice in one object`;
        names.add(name);
      },
      onLiteralValue: (value, offset, length) => {
        if (typeof value === 'number' && problem === null) {
          problem = numberProblem(value, text.slice(offset, offset + length));
        }
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
  return problem;
}

function numberProblem(value: number, written: string): string | null {
  if (Object.is(value, -0)) return `${shown(written)} is negative zero: send 0`;
  if (value === 0 && /[1-9]/.test(written.split(/e/i)[0]!))
    return `${shown(written)} is too small: it reads as 0`;
  if (!Number.isFinite(value)) return `${shown(written)} is too large`;
  if (/^-?\d+$/.test(written) && !Number.isSafeInteger(value)) {
    return `${shown(written)} is past 2^53: it would be read as ${value}`;
  }
  return null;
}

/** A name or number as the message quotes it: JSON, cut short. */
function shown(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}
