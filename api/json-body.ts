import { createScanner } from 'jsonc-parser';

/**
 * The values of jsonc-parser's `SyntaxKind` this reads: its typings declare a const enum, which a
 * build that compiles each file alone (verbatimModuleSyntax) cannot inline; json-body.test.ts
 * holds them equal to the library's own.
 */
export const TOKEN = {
  OpenBraceToken: 1,
  CloseBraceToken: 2,
  OpenBracketToken: 3,
  CloseBracketToken: 4,
  CommaToken: 5,
  StringLiteral: 10,
  NumericLiteral: 11,
  Unknown: 16,
  EOF: 17,
} as const;

/**
 * What makes a JSON text mean something other than what it says, or null when nothing does: a
 * name given twice in one object (JSON.parse would keep the last silently), or a number that is
 * not the number written (`-0`; an exponent that underflows to 0 or overflows to Infinity; an
 * integer past 2^53 that rounds to another). Read once with jsonc-parser's scanner (its tokens,
 * names decoded as JSON decodes them); syntax errors are left to the parser that follows.
 */
export function misleadingJson(text: string): string | null {
  const scanner = createScanner(text, true);
  // One entry per open container: the names an object has had so far, null for an array.
  const open: (Set<string> | null)[] = [];
  let nameNext = false;
  for (let token: number = scanner.scan(); token !== TOKEN.EOF; token = scanner.scan()) {
    switch (token) {
      case TOKEN.OpenBraceToken:
        open.push(new Set());
        nameNext = true;
        break;
      case TOKEN.OpenBracketToken:
        open.push(null);
        nameNext = false;
        break;
      case TOKEN.CloseBraceToken:
      case TOKEN.CloseBracketToken:
        open.pop();
        nameNext = false;
        break;
      case TOKEN.CommaToken:
        nameNext = open[open.length - 1] instanceof Set;
        break;
      case TOKEN.StringLiteral: {
        const names = nameNext ? open[open.length - 1] : null;
        nameNext = false;
        if (!names) break;
        const name = scanner.getTokenValue();
        if (names.has(name)) return `the name ${shown(name)} appears twice in one object`;
        names.add(name);
        break;
      }
      case TOKEN.NumericLiteral: {
        nameNext = false;
        const problem = numberProblem(scanner.getTokenValue());
        if (problem) return problem;
        break;
      }
      case TOKEN.Unknown:
        return null;
      default:
        nameNext = false;
    }
  }
  return null;
}

function numberProblem(written: string): string | null {
  const value = Number(written);
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
