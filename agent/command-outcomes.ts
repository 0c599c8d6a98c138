import { ApiError } from '../client';
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

  constructor(
    private readonly handlers: CommandHandlers,
    private readonly journal: Journal,
    private readonly log: Log,
  ) {}

  /** The outcome to report for `command`, decided by its handler when it is new; null: ignored. */
  async decide(command: AgentCommand, context: CommandContext): Promise<JournalEntry | null> {
    const recorded = this.journal.find(command.id);
    if (recorded) return recorded;
    if (this.ignored.has(command.id)) return null;
    const decided = await this.handlers.handle(command, context);
    if (decided.outcome === 'ignore') {
      this.ignored.add(command.id);
      this.log('info', `command ${command.id} (${command.kind}) ignored`, { commandId: command.id });
      return null;
    }
    const entry: JournalEntry = {
      id: command.id,
      kind: command.kind,
      outcome: decided.outcome === 'ack' ? 'acked' : 'refused',
      ...(decided.outcome === 'refuse' ? { reason: decided.reason } : {}),
      at: new Date().toISOString(),
    };
    // Recorded even when the agent is stopping: what the handler did is done.
    this.journal.append(entry);
    if (decided.outcome === 'ack' && (decided.after || decided.final)) {
      this.afterAcks.set(command.id, { after: decided.after, final: decided.final });
    }
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
