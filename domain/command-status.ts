import { assertNever } from './assert-never';

/** `purge` and `remediate` serve their operations; `run` is a named action someone asked for. */
export const COMMAND_KINDS = ['purge', 'remediate', 'run'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/**
 * A command queued for a node's agent. `pending` until the agent answers or the command is
 * withdrawn (`cancelled`) or outlives its `expiresAt` (`expired`). A purge or a remediation rung is
 * answered once: `acked` (carried out) or `refused`. A `run` command (docs/lifecycle/commands.md) is
 * `running` once the agent has journaled and started it, then ends `succeeded` (exit 0), `failed`
 * (another exit, a timeout, a program that would not start) or `returned` (the agent started again
 * while it ran, or the action restarted the machine: it is not run again); `refused` before it runs.
 */
export const COMMAND_STATUSES = [
  'pending',
  'running',
  'acked',
  'refused',
  'cancelled',
  'expired',
  'succeeded',
  'failed',
  'returned',
] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

/** What an agent may report of a command: its answer, that it started one, or how a run ended. */
export type CommandAnswer = Extract<
  CommandStatus,
  'acked' | 'refused' | 'running' | 'succeeded' | 'failed' | 'returned'
>;

/** How a `run` command ended, as its agent reports it. */
export type RunEnd = Extract<CommandStatus, 'succeeded' | 'failed' | 'returned'>;

/** The statuses a command may move to from `status`; every other status is final. */
export function commandMoves(status: CommandStatus): readonly CommandStatus[] {
  switch (status) {
    case 'pending':
      // A run's end may arrive first when the report of its start was lost.
      return ['running', 'acked', 'refused', 'cancelled', 'expired', 'succeeded', 'failed', 'returned'];
    case 'running':
      // Cancelled only when the node's identity goes: no agent could report the end any more.
      return ['succeeded', 'failed', 'returned', 'cancelled'];
    case 'acked':
    case 'refused':
    case 'cancelled':
    case 'expired':
    case 'succeeded':
    case 'failed':
    case 'returned':
      return [];
    default:
      return assertNever(status);
  }
}

/**
 * Statuses the agent is still to act on or report (delivered on the command stream; withdrawn when
 * the node's identity, its remediation or its purge goes).
 */
export const OPEN_COMMAND_STATUSES = COMMAND_STATUSES.filter((s) => commandMoves(s).length > 0);

/**
 * What an agent's report does to a command in `status`: `record` it; `repeat` when the command is
 * already where the report would take it (a retry after a lost reply; a run's start reported after
 * its end); `conflict` when it is final otherwise.
 */
export function answerEffect(status: CommandStatus, answer: CommandAnswer): 'record' | 'repeat' | 'conflict' {
  if (commandMoves(status).includes(answer)) return 'record';
  if (status === answer) return 'repeat';
  if (answer === 'running' && (['succeeded', 'failed', 'returned'] as const).some((s) => s === status)) {
    return 'repeat';
  }
  return 'conflict';
}
