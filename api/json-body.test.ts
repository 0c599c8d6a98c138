import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { misleadingJson, TOKEN } from './json-body';

describe('misleadingJson', () => {
  it("reads jsonc-parser's token kinds as the library numbers them", () => {
    const { SyntaxKind } = createRequire(import.meta.url)('jsonc-parser') as {
      SyntaxKind: Record<string, number>;
    };
    for (const [name, value] of Object.entries(TOKEN)) expect(SyntaxKind[name], name).toBe(value);
  });

  it('finds a name twice in one object, at any depth and however it is escaped', () => {
    expect(misleadingJson('{"a":1,"a":2}')).toMatch(/"a" appears twice/);
    expect(misleadingJson('{"a":1,"\\u0061":2}')).toMatch(/"a" appears twice/);
    expect(misleadingJson('{"x":[{"k":1},{"k":2,"k":3}]}')).toMatch(/"k" appears twice/);
    expect(misleadingJson('{"o":{"a":{"a":1}},"a":"a"}')).toBeNull();
    expect(misleadingJson('["a","a",{"a":"a"}]')).toBeNull();
  });

  it('finds numbers that are not what they say, and leaves the rest', () => {
    for (const number of ['-0', '-0.0', '-0e5', '1e-400', '-1e-999', '1e309', '9007199254740993'])
      expect(misleadingJson(`{"n":${number}}`), number).not.toBeNull();
    for (const number of ['0', '0.0', '1', '-1', '1.5', '1e3', '5e-324', '9007199254740991', '0e5'])
      expect(misleadingJson(`{"n":${number}}`), number).toBeNull();
  });

  it('leaves syntax errors to the parser', () => {
    for (const text of ['', '{', '{"a":}', '{"a":1,}', "{'a':1}", '\u0000'])
      expect(misleadingJson(text)).toBeNull();
  });
});
