import { describe, expect, it } from 'vitest';
import { answerTurned, ASKING, endingRefusal, REFUSED } from './observed';

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

describe('when an answer wakes the drain waiting for the work', () => {
  const refusal = (n: number) =>
    `${REFUSED}eviction blocked by PodDisruptionBudget ns/web (${n} of 3 available)`;

  it('the first answer, and each turn between refused and accepted', () => {
    expect(answerTurned(null, refusal(2))).toBe(true);
    expect(answerTurned(ASKING, refusal(2))).toBe(true);
    expect(answerTurned(ASKING, 'evicted: the pod is terminating')).toBe(true);
    expect(answerTurned(refusal(2), 'evicted: the pod is terminating')).toBe(true);
    expect(answerTurned('evicted: the pod is terminating', refusal(2))).toBe(true);
  });

  it('not an ask under way, nor a refusal or acceptance in other words', () => {
    expect(answerTurned(null, ASKING)).toBe(false);
    expect(answerTurned(refusal(2), ASKING)).toBe(false);
    expect(answerTurned(refusal(2), refusal(3))).toBe(false);
    expect(answerTurned('requeued', 'already gone')).toBe(false);
  });
});
