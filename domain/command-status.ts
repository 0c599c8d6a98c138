import { assertNever } from './assert-never';

/** A command queued for a node's agent: `pending` until the agent answers or the command is withdrawn. */
export const COMMAND_STATUSES = ['pending', 'acked', 'refused', 'cancelled'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

/** The agent's two answers: it carried the command out, or it cannot or will not. */
export type CommandAnswer = Extract<CommandStatus, 'acked' | 'refused'>;

/** The statuses a command may move to from `status`; an answered or cancelled command is final. */
export function commandMoves(status: CommandStatus): readonly CommandStatus[] {
  switch (status) {
    case 'pending':
      return ['acked', 'refused', 'cancelled'];
    case 'acked':
    case 'refused':
    case 'cancelled':
      return [];
    default:
      return assertNever(status);
  }
}

/** Statuses the agent may still be asked to act on (delivered on the command stream, cancellable). */
export const OPEN_COMMAND_STATUSES = COMMAND_STATUSES.filter((s) => commandMoves(s).length > 0);

/**
 * What an agent's answer does to a command in `status`: `record` it; `repeat` when the command has
 * this very answer already (a retry after a lost reply); `conflict` when it is final otherwise.
 */
export function answerEffect(status: CommandStatus, answer: CommandAnswer): 'record' | 'repeat' | 'conflict' {
  if (commandMoves(status).includes(answer)) return 'record';
  return status === answer ? 'repeat' : 'conflict';
}
