import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TEXT_PATTERN, textFault } from './text';

/** UTF-16 code units, surrogates and control characters much more often than chance. */
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u)),
  fc.integer({ min: 0, max: 0x9f }).map((u) => String.fromCharCode(u)),
  fc.constantFrom('a', 'é', '🚀', '\u{1f600}', 'ß', '中'),
  // Format characters: bidi controls, invisibles, the joiners (kept) and a tag character.
  fc.constantFrom('\u202e', '\u2066', '\u200b', '\u200c', '\u200d', '\ufeff', '\u{e0041}', '\u{1d173}'),
);
const units = fc.array(unit, { maxLength: 12 }).map((parts) => parts.join(''));

describe('free text', () => {
  it('takes letters of any script, emoji, spaces and punctuation', () => {
    for (const value of [
      'replace PSU',
      'GPU B7-03',
      'Zürich — Rack 4',
      '机架 7',
      '🚀 ok',
      '/var/lib/drydock',
      ' ',
    ]) {
      expect(textFault(value), value).toBeNull();
      expect(TEXT_PATTERN.test(value), value).toBe(true);
    }
  });

  it('refuses every control character: C0 (NUL, ESC, newline, tab), DEL and C1', () => {
    const controls = [...Array(0x20).keys(), ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i)];
    for (const code of controls) {
      const value = `ok${String.fromCharCode(code)}`;
      expect(textFault(value), code.toString(16)).toMatch(
        /^a control character \(U\+00[0-9A-F]{2}\) at index 2/,
      );
    }
    expect(textFault('\u001b[31mred')).toMatch(/U\+001B/);
  });

  it('refuses lone surrogates and takes pairs', () => {
    expect(textFault('\ud800')).toMatch(/^a lone surrogate \(U\+D800\) at index 0/);
    expect(textFault('x\udfff')).toMatch(/^a lone surrogate \(U\+DFFF\) at index 1/);
    expect(textFault('\udc00\ud800')).toMatch(/U\+DC00/);
    expect(textFault('\ud83d\ude80\ud83d')).toMatch(/at index 2/);
    expect(textFault('\ud83d\ude80')).toBeNull();
  });

  it('refuses format characters that hide or reorder text, and keeps the joiners', () => {
    for (const [value, code] of [
      ['invoice\u202egpj.exe', 'U+202E'],
      ['a\u2066b\u2069', 'U+2066'],
      ['zero\u200bwidth', 'U+200B'],
      ['\ufeffbom', 'U+FEFF'],
      ['soft\u00adhyphen', 'U+00AD'],
      ['tag\u{e0041}', 'U+E0041'],
      ['mark\u200f', 'U+200F'],
    ] as const) {
      expect(textFault(value), code).toContain(`a format character that hides or reorders text (${code}) at`);
    }
    // ZWNJ and ZWJ: Persian words and emoji sequences need them.
    for (const value of ['می\u200cخواهم', '👩\u200d💻']) expect(textFault(value), value).toBeNull();
  });

  it('says the same as the documented pattern, with and without the u flag (tags aside)', () => {
    const unicode = new RegExp(TEXT_PATTERN.source, 'u');
    /** Format characters refused: the BMP's Cf but the joiners, and tag characters. */
    const hidden = (value: string) =>
      [...value].some((ch) => {
        const point = ch.codePointAt(0)!;
        if (point >= 0xe0000 && point <= 0xe007f) return true;
        return point <= 0xffff && point !== 0x200c && point !== 0x200d && /\p{Cf}/u.test(ch);
      });
    fc.assert(
      fc.property(units, (value) => {
        const ok = textFault(value) === null;
        // The pattern cannot name an astral character alike in both modes: it leaves tags to the server.
        const okButTags = textFault(value.replace(/\udb40[\udc00-\udc7f]/g, 'x')) === null;
        expect(TEXT_PATTERN.test(value)).toBe(okButTags);
        expect(unicode.test(value)).toBe(okButTags);
        // Text survives UTF-8 unchanged and has no control character and no hidden format character.
        expect(ok).toBe(
          Buffer.from(value, 'utf8').toString('utf8') === value && !/\p{Cc}/u.test(value) && !hidden(value),
        );
      }),
      { numRuns: 5_000 },
    );
  });

  it('finds a fault at the end of a megabyte without running out of stack', () => {
    const long = `${'a'.repeat(1 << 20)}\u0000`;
    expect(textFault(long)).toMatch(`at index ${1 << 20}`);
  });
});
