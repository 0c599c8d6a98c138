import { describe, expect, it } from 'vitest';
import { endingRefusal } from './observed';

const job = {
  id: 'alloc_1',
  source: 'kubernetes:k1',
  endRequestedAt: null,
  live: true,
  draining: false,
};

describe("when a scheduler's answer may be recorded", () => {
  it('on live observed work whose node drains (asked politely) or whose end a deadline asked', () => {
    expect(endingRefusal({ ...job, draining: true })).toBeNull();
    expect(endingRefusal({ ...job, endRequestedAt: new Date() })).toBeNull();
    expect(endingRefusal({ ...job, endRequestedAt: new Date(), draining: true })).toBeNull();
  });

  it('not on work neither on a draining node nor asked to end, placed through Drydock, or over', () => {
    expect(endingRefusal(job)).toBe(
      'no end of allocation alloc_1 is due from kubernetes:k1: no drain is open on its node and none asked its end',
    );
    expect(endingRefusal({ ...job, source: null, draining: true })).toBe(
      'allocation alloc_1 was placed through Drydock, not observed: no scheduler ends it',
    );
    expect(endingRefusal({ ...job, live: false, draining: true })).toBe(
      'allocation alloc_1 is released (or past its end): its work is over',
    );
  });
});
