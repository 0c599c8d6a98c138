import { ApiError } from '@drydock/client';
import type { AgentClient } from './client';
import type { AgentCommand, CommandContext, CommandHandlers, CommandOutcome } from './commands';
import type { Journal, JournalEntry } from './journal';
import type { Log } from './log';

/** What is left to do once the API has an ack. */
export type AfterAck = Pick<Extract<CommandOutcome, { outcome: 'ack' }>, 'after' | 'final'>;

/**
 * What a node decided for the commands it was sent, and the reports of it. Every ack and refusal
 * is in the journal first: a command found there is not carried out again, its recorded outcome
 * is reported again. A command a handler ignored stays ignored for the session. An after-ack step
 * waits until the API has the ack, kept across a failed report.
 */
export class CommandOutcomes {
  private readonly ignored = new Set<string>();
  private readonly afterAcks = new Map<string, AfterAck>();
  /** Restarting actions acked by an agent before this one, whose return the API has not heard. */
  private readonly returns: JournalEntry[];

  constructor(
    private readonly handlers: CommandHandlers,
    private readonly journal: Journal,
    private readonly log: Log,
  ) {
    this.returns = journal.entries.filter(
      (e) => journal.find(e.id) === e && e.outcome === 'acked' && e.restarts && e.returnedAt === undefined,
    );
  }

  /** Whether a return from a restarting action is still to be reported. */
  get returnsDue(): boolean {
    return this.returns.length > 0;
  }

  /**
   * Tells the API the machine came back from each restarting action acked before this start, and
   * journals that it did, so it is said once. Throws when a report did not get through (tried
   * again on the next call); stops at a command still pending there (its ack never got through);
   * a command the API no longer takes it for (gone, cancelled) is dropped with a warning.
   */
  async reportReturns(client: AgentClient, signal: AbortSignal): Promise<void> {
    while (this.returns.length > 0) {
      const entry = this.returns[0]!;
      try {
        await client.returned(entry.id, signal);
        this.log(
          'info',
          `command ${entry.id} (${entry.kind}): reported that the machine came back from ${entry.action}`,
          {
            commandId: entry.id,
          },
        );
      } catch (error) {
        if (!(error instanceof ApiError) || ![404, 409].includes(error.status)) throw error;
        // Pending there: the ack never got through; the command comes back and runs (`rearm`).
        if (error.details.status === 'pending') return;
        this.log(
          'warn',
          `command ${entry.id} (${entry.kind}): the return from ${entry.action} not reported: ${error.message}`,
          {
            commandId: entry.id,
          },
        );
      }
      const at = new Date().toISOString();
      this.journal.append({ ...entry, returnedAt: at, at });
      this.returns.shift();
    }
  }

  /**
   * The outcome to report for `command`, decided by its handler when it is new; null: ignored, or
   * the agent stopped while its action ran (left `started`, so the next start refuses it).
   */
  async decide(command: AgentCommand, context: CommandContext): Promise<JournalEntry | null> {
    const recorded = this.journal.find(command.id);
    if (recorded?.outcome === 'started') {
      // Begun by an agent that stopped before it had an outcome: whether it ran is unknown.
      return this.record(command, {
        outcome: 'refused',
        action: recorded.action,
        reason: `the agent stopped while ${recorded.action ?? command.kind} ran; not run again`,
      });
    }
    if (recorded?.outcome === 'acked' && recorded.restarts && !this.afterAcks.has(command.id)) {
      // Delivered again, the API never took the ack, so the action (run only once it has) never
      // ran: it runs once the ack gets through now, and its return is reported on the next start.
      await this.rearm(command, context);
      return recorded;
    }
    if (recorded) return recorded;
    if (this.ignored.has(command.id)) return null;
    let decided: CommandOutcome = await this.handlers.handle(command, context);
    let action: string | undefined;
    if (decided.outcome === 'run') {
      action = decided.action;
      this.record(command, { outcome: 'started', action });
      const ran = await decided.run();
      if (ran.outcome === 'stopped') {
        this.log('warn', `command ${command.id} (${command.kind}): stopped while ${action} ran`, {
          commandId: command.id,
        });
        return null;
      }
      decided = ran;
    }
    if (decided.outcome === 'ignore') {
      this.ignored.add(command.id);
      this.log('info', `command ${command.id} (${command.kind}) ignored`, { commandId: command.id });
      return null;
    }
    if (decided.outcome === 'refuse')
      return this.record(command, { outcome: 'refused', action, reason: decided.reason });
    // Recorded even when the agent is stopping: what the handler did is done.
    const entry = this.record(command, {
      outcome: 'acked',
      action: action ?? decided.action,
      ...(decided.restarts ? { restarts: true as const } : {}),
    });
    if (decided.after || decided.final) {
      this.afterAcks.set(command.id, { after: decided.after, final: decided.final });
    }
    return entry;
  }

  /** Sets up again the after-ack step of a restarting action acked by an agent before this one. */
  private async rearm(command: AgentCommand, context: CommandContext): Promise<void> {
    const returns = this.returns.findIndex((e) => e.id === command.id);
    if (returns >= 0) this.returns.splice(returns, 1);
    const decided = await this.handlers.handle(command, context);
    if (decided.outcome === 'ack' && decided.after) this.afterAcks.set(command.id, { after: decided.after });
  }

  /** Appends where `command` stands now to the journal (on disk before anything is reported). */
  private record(
    command: AgentCommand,
    step: Pick<JournalEntry, 'outcome' | 'action' | 'reason' | 'restarts'>,
  ): JournalEntry {
    const entry: JournalEntry = {
      id: command.id,
      kind: command.kind,
      outcome: step.outcome,
      ...(step.action === undefined ? {} : { action: step.action }),
      ...(step.reason === undefined ? {} : { reason: step.reason }),
      ...(step.restarts ? { restarts: true } : {}),
      at: new Date().toISOString(),
    };
    this.journal.append(entry);
    return entry;
  }

  /** The step due once the API has the ack of command `id`, if any. */
  afterAck(id: string): AfterAck | undefined {
    return this.afterAcks.get(id);
  }

  /**
   * Sends the outcome; true when the API took it, false when the command was already final
   * (either way its after-ack step is no longer pending). Throws when the report did not get
   * through: it is sent again when the command comes back.
   */
  async report(client: AgentClient, entry: JournalEntry, signal: AbortSignal): Promise<boolean> {
    try {
      if (entry.outcome === 'acked') await client.ack(entry.id, signal);
      else await client.refuse(entry.id, entry.reason ?? 'refused', signal);
    } catch (error) {
      // Cancelled, answered before, or gone: the command is final elsewhere; nothing to retry.
      if (error instanceof ApiError && [400, 404, 409].includes(error.status)) {
        this.afterAcks.delete(entry.id);
        this.log('warn', `command ${entry.id} (${entry.kind}): ${error.message}`, { commandId: entry.id });
        return false;
      }
      throw error;
    }
    this.afterAcks.delete(entry.id);
    this.log(
      'info',
      `command ${entry.id} (${entry.kind}) ${entry.outcome}${entry.reason ? `: ${entry.reason}` : ''}`,
      { commandId: entry.id, kind: entry.kind, outcome: entry.outcome },
    );
    return true;
  }
}
