import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetMax, describeBudget, grantsSlot, type Budget } from './budget';

const policyArb = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: 0, max: 50 }),
  fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`),
);

describe('budgetMax', () => {
  it('reads a count as it is, and defaults to 1', () => {
    expect(budgetMax(undefined, 10)).toBe(1);
    expect(budgetMax(3, 10)).toBe(3);
    expect(budgetMax(0, 10)).toBe(0);
    // A count larger than the pool is allowed: every node may go.
    expect(budgetMax(20, 10)).toBe(20);
  });

  it('rounds a percent down, but to at least 1 unless it is 0%', () => {
    expect(budgetMax('25%', 10)).toBe(2);
    expect(budgetMax('25%', 3)).toBe(1);
    expect(budgetMax('50%', 1)).toBe(1);
    expect(budgetMax('100%', 7)).toBe(7);
    expect(budgetMax('0%', 100)).toBe(0);
    expect(budgetMax('10%', 0)).toBe(1);
  });

  it('never exceeds what the policy allows, and is 0 only when the policy says so', () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 0, max: 500 }), (policy, nodes) => {
        const max = budgetMax(policy, nodes);
        expect(Number.isInteger(max) && max >= 0).toBe(true);
        expect(max === 0).toBe(policy === 0 || policy === '0%');
        if (typeof policy === 'string') {
          const exact = (nodes * Number(policy.slice(0, -1))) / 100;
          expect(max <= Math.max(1, exact)).toBe(true);
          expect(max > exact - 1).toBe(true);
        }
      }),
    );
  });
});

describe('grantsSlot', () => {
  const budgetArb: fc.Arbitrary<Budget> = fc
    .tuple(
      fc.integer({ min: 0, max: 5 }),
      fc.uniqueArray(fc.constantFrom('n1', 'n2', 'n3', 'n4', 'n5', 'n6')),
    )
    .map(([max, holders]) => ({ max, used: holders.length, holders }));

  it('grants a holder its slot again, and a newcomer only a free one', () => {
    fc.assert(
      fc.property(budgetArb, fc.constantFrom('n1', 'n2', 'n7'), (budget, nodeId) => {
        const granted = grantsSlot(budget, nodeId);
        expect(granted).toBe(budget.holders.includes(nodeId) || budget.used < budget.max);
        // Granting a newcomer never takes the budget past its max.
        if (granted && !budget.holders.includes(nodeId))
          expect(budget.used + 1).toBeLessThanOrEqual(budget.max);
      }),
    );
  });

  it('says who holds the slots', () => {
    expect(describeBudget({ max: 1, used: 1, holders: ['node_a'] })).toBe('1/1 used by node_a');
    expect(describeBudget({ max: 2, used: 0, holders: [] })).toBe('0/2 used');
  });
});
