import { describe, expect, it } from 'vitest';
import { causeChain } from './errors';

describe('causeChain', () => {
  it('lists an error and its causes, outermost first', () => {
    const root = new Error('3 INVALID_ARGUMENT: no mapping');
    const wrapped = new Error('Failed to start Workflow', { cause: root });
    expect(causeChain(wrapped)).toEqual([wrapped, root]);
    expect(causeChain(new Error('alone', { cause: 'a string' }))).toHaveLength(1);
    expect(causeChain('not an error')).toEqual([]);
  });

  it('stops after five errors, also when the chain loops', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(causeChain(a)).toEqual([a, b, a, b, a]);
  });
});
