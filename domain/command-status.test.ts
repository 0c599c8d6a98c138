import { describe, expect, it } from 'vitest';
import {
  answerEffect,
  COMMAND_STATUSES,
  commandMoves,
  OPEN_COMMAND_STATUSES,
  type CommandStatus,
} from './command-status';

describe('the command status table', () => {
  it('moves a pending command to an answer or cancelled, and nothing else anywhere', () => {
    const expected: Record<CommandStatus, CommandStatus[]> = {
      pending: ['acked', 'refused', 'cancelled'],
      acked: [],
      refused: [],
      cancelled: [],
    };
    for (const from of COMMAND_STATUSES) {
      for (const to of COMMAND_STATUSES) {
        expect(commandMoves(from).includes(to), `${from} -> ${to}`).toBe(expected[from].includes(to));
      }
    }
    expect(OPEN_COMMAND_STATUSES).toEqual(['pending']);
  });

  it('records an answer once; the same answer again repeats, any other conflicts', () => {
    const effects = COMMAND_STATUSES.map((s) => [s, answerEffect(s, 'acked'), answerEffect(s, 'refused')]);
    expect(effects).toEqual([
      ['pending', 'record', 'record'],
      ['acked', 'repeat', 'conflict'],
      ['refused', 'conflict', 'repeat'],
      ['cancelled', 'conflict', 'conflict'],
    ]);
  });

  it('refuses an unknown status loudly', () => {
    expect(() => commandMoves('delivered' as CommandStatus)).toThrow('unhandled case: "delivered"');
  });
});
