import { describe, expect, it } from 'vitest';
import {
  answerEffect,
  COMMAND_STATUSES,
  commandMoves,
  OPEN_COMMAND_STATUSES,
  type CommandAnswer,
  type CommandStatus,
} from './command-status';

describe('the command status table', () => {
  it('moves a pending command anywhere but back, a running one to its end, and nothing else', () => {
    const ends: CommandStatus[] = ['succeeded', 'failed', 'returned'];
    const expected: Record<CommandStatus, CommandStatus[]> = {
      pending: ['running', 'acked', 'refused', 'cancelled', 'expired', ...ends],
      running: [...ends, 'cancelled'],
      acked: [],
      refused: [],
      cancelled: [],
      expired: [],
      succeeded: [],
      failed: [],
      returned: [],
    };
    for (const from of COMMAND_STATUSES) {
      for (const to of COMMAND_STATUSES) {
        expect(commandMoves(from).includes(to), `${from} -> ${to}`).toBe(expected[from].includes(to));
      }
    }
    expect(OPEN_COMMAND_STATUSES).toEqual(['pending', 'running']);
  });

  it('records an answer once; the same answer again repeats, any other conflicts', () => {
    const answers: CommandAnswer[] = ['acked', 'refused', 'running', 'succeeded'];
    const effects = COMMAND_STATUSES.map((s) => [s, ...answers.map((a) => answerEffect(s, a))]);
    expect(effects).toEqual([
      ['pending', 'record', 'record', 'record', 'record'],
      ['running', 'conflict', 'conflict', 'repeat', 'record'],
      ['acked', 'repeat', 'conflict', 'conflict', 'conflict'],
      ['refused', 'conflict', 'repeat', 'conflict', 'conflict'],
      ['cancelled', 'conflict', 'conflict', 'conflict', 'conflict'],
      ['expired', 'conflict', 'conflict', 'conflict', 'conflict'],
      // A start reported after the end it led to (its reply was lost) changes nothing.
      ['succeeded', 'conflict', 'conflict', 'repeat', 'repeat'],
      ['failed', 'conflict', 'conflict', 'repeat', 'conflict'],
      ['returned', 'conflict', 'conflict', 'repeat', 'conflict'],
    ]);
  });

  it('refuses an unknown status loudly', () => {
    expect(() => commandMoves('delivered' as CommandStatus)).toThrow('unhandled case: "delivered"');
  });
});
