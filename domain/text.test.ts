import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TEXT_PATTERN, textFault } from './text';

/** UTF-16 code units, surrogates and control characters much more often than chance. */
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u)),
  fc.integer({ min: 0, max: 0x9f }).map((u) => String.fromCharCode(u)),
  fc.constantFrom('a', 'é', '🚀', '\u{1f600}', 'ß', '中'),
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

  it('says the same as the documented pattern, with and without the u flag', () => {
    const unicode = new RegExp(TEXT_PATTERN.source, 'u');
    fc.assert(
      fc.property(units, (value) => {
        const ok = textFault(value) === null;
        expect(TEXT_PATTERN.test(value)).toBe(ok);
        expect(unicode.test(value)).toBe(ok);
        // Text is exactly what survives UTF-8 unchanged and has no control character.
        expect(ok).toBe(Buffer.from(value, 'utf8').toString('utf8') === value && !/\p{Cc}/u.test(value));
      }),
      { numRuns: 5_000 },
    );
  });

  it('finds a fault at the end of a megabyte without running out of stack', () => {
    const long = `${'a'.repeat(1 << 20)}\u0000`;
    expect(textFault(long)).toMatch(`at index ${1 << 20}`);
  });
});
