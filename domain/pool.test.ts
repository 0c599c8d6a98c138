import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergePatch, patchBetween, sameJson } from './pool';

/** JSON objects without nulls inside (a stored policy holds none: null means "remove"). */
const stored = fc.dictionary(
  fc.constantFrom('a', 'b', 'c', 'lostAfter', 'remediation'),
  fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.integer(),
      fc.string(),
      fc.boolean(),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('x', 'y', 'z'), tie('value'), { maxKeys: 3 }),
    ),
  })).value,
  { maxKeys: 4 },
);

describe('mergePatch (RFC 7396)', () => {
  it('sets what the patch names, removes what it sets to null, keeps the rest', () => {
    const target = { lostAfter: '10m', maxUnavailable: 1, remediation: { A: { ladder: ['reboot'] }, B: {} } };
    expect(
      mergePatch(target, {
        lostAfter: null,
        maxUnhealthy: '20%',
        remediation: { A: { attemptTimeout: '2m' }, B: null },
      }),
    ).toEqual({
      maxUnavailable: 1,
      maxUnhealthy: '20%',
      remediation: { A: { ladder: ['reboot'], attemptTimeout: '2m' } },
    });
    // Arrays are replaced whole, never merged; the target is left as it was.
    expect(mergePatch({ grants: ['a', 'b'] }, { grants: ['c'] })).toEqual({ grants: ['c'] });
    expect(target.lostAfter).toBe('10m');
    // The examples of RFC 7396's appendix that a policy can meet.
    expect(mergePatch({ a: 'b' }, { a: 'c' })).toEqual({ a: 'c' });
    expect(mergePatch({ a: 'b' }, { a: null })).toEqual({});
    expect(mergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(mergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
    expect(mergePatch({}, { a: { bb: { ccc: null } } })).toEqual({ a: { bb: {} } });
  });
});

describe('patchBetween', () => {
  it('is the smallest patch from one object to the other: applied, it gives the other', () => {
    fc.assert(
      fc.property(stored, stored, (from, to) => {
        const patch = patchBetween(from, to);
        expect(sameJson(mergePatch(from, patch), to)).toBe(true);
        // Nothing in it that was already so.
        for (const key of Object.keys(patch)) expect(sameJson(from[key], to[key])).toBe(false);
      }),
    );
  });

  it('is empty exactly when nothing differs, whatever the order of keys', () => {
    fc.assert(
      fc.property(stored, (value) => {
        const reordered = Object.fromEntries(Object.entries(value).reverse());
        expect(patchBetween(value, reordered)).toEqual({});
      }),
    );
    expect(patchBetween({ maxUnavailable: 1 }, { maxUnavailable: '1' })).toEqual({ maxUnavailable: '1' });
    expect(patchBetween({ lostAfter: '10m' }, {})).toEqual({ lostAfter: null });
    expect(patchBetween({ r: { A: { ladder: ['x'] } } }, { r: { A: { ladder: ['x', 'y'] } } })).toEqual({
      r: { A: { ladder: ['x', 'y'] } },
    });
  });
});
