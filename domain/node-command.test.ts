import { describe, expect, it } from 'vitest';
import { DrydockError } from './errors';
import { argsFor, type ActionOnNode } from './node-command';

const actions: ActionOnNode[] = [
  { name: 'diagnostics', params: {} },
  {
    name: 'logs',
    params: { since: { pattern: '^[0-9]+[smhd]$', default: '1h' }, unit: { pattern: '^[a-z.-]+$' } },
  },
];

function refusal(run: () => unknown): DrydockError {
  try {
    run();
  } catch (error) {
    if (error instanceof DrydockError) return error;
  }
  throw new Error('expected a refusal');
}

describe('the arguments of a run command', () => {
  it('fills defaults and keeps what was given', () => {
    expect(argsFor(actions, 'logs', { unit: 'kubelet' })).toEqual({ since: '1h', unit: 'kubelet' });
    expect(argsFor(actions, 'logs', { since: '2h', unit: 'slurmd' })).toEqual({
      since: '2h',
      unit: 'slurmd',
    });
    expect(argsFor(actions, 'diagnostics', {})).toEqual({});
  });

  it('refuses an action the agent does not run, naming those it does', () => {
    const error = refusal(() => argsFor(actions, 'reboot', {}));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toBe(
      "the node's agent has no action reboot (configured: diagnostics, logs); actions are set in its --config file",
    );
  });

  it('refuses an undeclared parameter and a missing one', () => {
    expect(refusal(() => argsFor(actions, 'diagnostics', { gpu: '0' })).message).toBe(
      'action diagnostics has no parameter gpu (declared: none)',
    );
    expect(refusal(() => argsFor(actions, 'logs', {})).message).toBe('action logs needs a value for unit');
  });

  it('takes anything for a node that never said what it runs: its agent refuses', () => {
    expect(argsFor(null, 'anything', { a: 'b' })).toEqual({ a: 'b' });
  });
});
