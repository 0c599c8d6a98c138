import type { Schemas } from '@drydock/client';
import { freeText, MAX_REASON } from './free-text';
import type { Log } from './log';
import { purgeHandler } from './purge';
import { remediateHandler, type ActionConfigs } from './remediate';

/** One command of the node's command stream (docs/lifecycle/enrollment.md, Command stream). */
export type AgentCommand = Schemas['AgentCommand'];

/**
 * What a handler decided. `ack`: carried out (`after` runs once the API has the ack — a purge
 * wipes the node only then); `refuse`: cannot or will not, with the reason the API records;
 * `ignore`: say nothing (a simulated agent that lets the command time out); `run`: carry out
 * `action` now, journaled `started` before it begins, so that a command the agent stopped in the
 * middle of is refused on its next start instead of run twice (see `RunOutcome`).
 *
 * A `final` ack is the node's last word (a purge: the API forgets the node on it): once the API has
 * it the session stops — no heartbeat or poll goes out again — then `after` runs, and the session
 * ends `final`. An ack that `restarts` the machine (its `after` runs `action`) is journaled so, and
 * the next start reports that the machine came back.
 */
export type CommandOutcome =
  | { outcome: 'ack'; after?: () => Promise<void>; final?: boolean; action?: string; restarts?: true }
  | { outcome: 'refuse'; reason: string }
  | { outcome: 'ignore' }
  | { outcome: 'run'; action: string; run: () => Promise<RunOutcome> };

/** How a `run` ended: it succeeded, it failed (why), or the agent stopped while it ran. */
export type RunOutcome = { outcome: 'ack' } | { outcome: 'refuse'; reason: string } | { outcome: 'stopped' };

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

  /** The outcome for one command; a handler (or its `run`) that throws refuses with its message. */
  async handle(command: AgentCommand, context: CommandContext): Promise<CommandOutcome> {
    const handler = this.handlers.get(command.kind);
    if (!handler) return { outcome: 'refuse', reason: `unsupported command kind ${command.kind}` };
    const outcome = await guarded(command, () => handler(command, context));
    if (outcome.outcome !== 'run') return outcome;
    return { ...outcome, run: () => guarded(command, outcome.run) };
  }
}

/** `step`'s outcome with its refusal clipped; a throw is a refusal saying why. */
async function guarded<T extends CommandOutcome | RunOutcome>(
  command: AgentCommand,
  step: () => Promise<T>,
): Promise<T | { outcome: 'refuse'; reason: string }> {
  try {
    const outcome = await step();
    return outcome.outcome === 'refuse' ? { ...outcome, reason: clip(outcome.reason) } : outcome;
  } catch (error) {
    return { outcome: 'refuse', reason: clip(`${command.kind} failed: ${(error as Error).message}`) };
  }
}

/**
 * The handlers `drydock-agent run` starts with: purge (docs/lifecycle/purge.md), which deletes the
 * data directory and `binary` when one was named; remediate, which runs the configured `actions`
 * (docs/agent/gpu-machine.md).
 */
export function defaultHandlers(options: { binary?: string; actions: ActionConfigs }): CommandHandlers {
  return new CommandHandlers()
    .on('purge', purgeHandler(options))
    .on('remediate', remediateHandler(options.actions));
}

/** A refusal as the API takes it: free text of at most its length. */
function clip(reason: string): string {
  return freeText(reason, MAX_REASON, 'refused');
}
