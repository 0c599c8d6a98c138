import type { Schemas } from '../client';
import type { Log } from './log';
import { purgeHandler } from './purge';

/** One command of the node's command stream (docs/lifecycle/enrollment.md, Command stream). */
export type AgentCommand = Schemas['AgentCommand'];

/**
 * What a handler decided. `ack`: carried out (`after` runs once the API has the ack — a purge
 * wipes the node only then); `refuse`: cannot or will not, with the reason the API records;
 * `ignore`: say nothing (a simulated agent that lets the command time out).
 *
 * A `final` ack is the node's last word (a purge: the API forgets the node on it): once the API has
 * it the session stops — no heartbeat or poll goes out again — then `after` runs, and the session
 * ends `final`.
 */
export type CommandOutcome =
  | { outcome: 'ack'; after?: () => Promise<void>; final?: boolean }
  | { outcome: 'refuse'; reason: string }
  | { outcome: 'ignore' };

/** What a handler knows of the node it runs on. */
export interface CommandContext {
  nodeId: string;
  clusterId: string;
  /** The cluster CA public key (PEM) from the join: signed commands are checked against it. */
  caPublicKey: string;
  /** The node's data directory; absent for in-memory simulated agents. */
  dataDir?: string;
  log: Log;
  /** Aborts when the agent stops. */
  signal: AbortSignal;
}

export type CommandHandler = (command: AgentCommand, context: CommandContext) => Promise<CommandOutcome>;

/** The API takes refusal reasons of up to this many characters. */
const MAX_REASON = 256;

/**
 * Handlers by command kind. Purge and remediation register here (docs/lifecycle/purge.md,
 * docs/lifecycle/remediation.md); a kind nobody handles is refused, so the control plane hears at once
 * instead of waiting out a timeout.
 */
export class CommandHandlers {
  private readonly handlers = new Map<string, CommandHandler>();

  /** Handles `kind` with `handler` from now on, replacing any handler it had. */
  on(kind: string, handler: CommandHandler): this {
    this.handlers.set(kind, handler);
    return this;
  }

  kinds(): string[] {
    return [...this.handlers.keys()];
  }

  /** The outcome for one command; a handler that throws refuses with its message. */
  async handle(command: AgentCommand, context: CommandContext): Promise<CommandOutcome> {
    const handler = this.handlers.get(command.kind);
    if (!handler) return { outcome: 'refuse', reason: `unsupported command kind ${command.kind}` };
    try {
      const outcome = await handler(command, context);
      return outcome.outcome === 'refuse' ? { ...outcome, reason: clip(outcome.reason) } : outcome;
    } catch (error) {
      return { outcome: 'refuse', reason: clip(`${command.kind} failed: ${(error as Error).message}`) };
    }
  }
}

/**
 * The handlers `drydock-agent run` starts with: purge (docs/lifecycle/purge.md), which deletes the data
 * directory and `binary`; remediation adds its own here.
 */
export function defaultHandlers(options: { binary?: string }): CommandHandlers {
  return new CommandHandlers().on('purge', purgeHandler(options));
}

function clip(reason: string): string {
  const text = reason.trim() || 'refused';
  return text.length <= MAX_REASON ? text : `${text.slice(0, MAX_REASON - 1)}…`;
}
