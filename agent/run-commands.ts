import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '@drydock/client';
import type { AgentClient, AgentFacts, RunReport } from './client';
import type { AgentCommand, CommandContext } from './commands';
import { freeText, MAX_REASON } from './free-text';
import type { Journal, JournalEntry } from './journal';
import type { Log } from './log';
import type { Output } from './run-argv';

/**
 * How a `run` of an action ended: `succeeded` or `failed` with its output; `stopped`, the agent
 * stopped while it ran (left `started`: the next start reports it `returned`); `restarting`, an
 * action that restarts the machine went through (its return is reported on the next start).
 */
export type RunResult =
  | { status: 'succeeded' | 'failed'; exitCode: number | null; reason?: string; output: Output }
  | { status: 'stopped' }
  | { status: 'restarting' };

/** A command checked against its action: why it is refused, or how to run it. */
export type PreparedRun =
  { refuse: string } | { restarts: boolean; run: (context: CommandContext) => Promise<RunResult> };

/** The actions this machine runs: the real agent's from its config file, a simulated machine's. */
export interface ActionRunner {
  /** The actions as the agent reports them at session start (no command lines). */
  describe(): AgentFacts['actions'];
  prepare(command: AgentCommand): PreparedRun;
}

/**
 * Where a finished command's output waits until the API has it: written before the journal says
 * `finished`, so an agent that restarts in between reports it whole.
 */
export interface OutputStore {
  put(id: string, output: Output): void;
  get(id: string): Output | undefined;
  drop(id: string): void;
}

export class MemoryOutputStore implements OutputStore {
  private readonly outputs = new Map<string, Output>();
  put(id: string, output: Output): void {
    this.outputs.set(id, output);
  }
  get(id: string): Output | undefined {
    return this.outputs.get(id);
  }
  drop(id: string): void {
    this.outputs.delete(id);
  }
}

/** `DIR/<command id>.json`, one file a command (mode 0600), removed once reported. */
export class FileOutputStore implements OutputStore {
  constructor(private readonly dir: string) {}
  put(id: string, output: Output): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(this.file(id), JSON.stringify(output), { mode: 0o600 });
  }
  get(id: string): Output | undefined {
    const file = this.file(id);
    if (!existsSync(file)) return undefined;
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Output;
    } catch {
      return undefined;
    }
  }
  drop(id: string): void {
    rmSync(this.file(id), { force: true });
  }
  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}

const NO_OUTPUT: Output = { stdout: '', stderr: '', droppedBytes: 0 };

/**
 * The agent's side of `run` commands (docs/lifecycle/commands.md). A new command is checked
 * against its action (a refusal is journaled, then reported); otherwise the agent reports it
 * started — a command withdrawn meanwhile is refused there and never runs — journals `started`,
 * runs it, keeps its output, journals `finished` and reports the result. A command delivered again
 * is answered from the journal, never run twice: `started` without an end means the agent stopped
 * while it ran (or the action restarted the machine), reported `returned`.
 */
export class RunCommands {
  constructor(
    private readonly runner: ActionRunner,
    private readonly journal: Journal,
    private readonly outputs: OutputStore,
    private readonly log: Log,
  ) {}

  /** The actions as the session reports them. */
  actions(): AgentFacts['actions'] {
    return this.runner.describe();
  }

  /** Handles one `run` command; true once the API has where it stands (or it is final there). */
  async handle(command: AgentCommand, client: AgentClient, context: CommandContext): Promise<boolean> {
    const recorded = this.journal.find(command.id);
    if (recorded) return this.reportRecorded(command, recorded, client, context.signal);
    const prepared = this.runner.prepare(command);
    if ('refuse' in prepared) {
      const entry = this.record(command, { outcome: 'refused', reason: prepared.refuse });
      return this.reportRecorded(command, entry, client, context.signal);
    }
    if (!(await this.reported(command, () => client.start(command.id, context.signal)))) return true;
    this.record(command, { outcome: 'started', ...(prepared.restarts ? { restarts: true as const } : {}) });
    this.log('info', `command ${command.id}: running ${command.action}`, {
      commandId: command.id,
      action: command.action,
    });
    const result = await prepared.run(context);
    if (result.status === 'stopped') {
      this.log('warn', `command ${command.id}: the agent stopped while ${command.action} ran`, {
        commandId: command.id,
      });
      return false;
    }
    if (result.status === 'restarting') {
      this.log(
        'info',
        `command ${command.id}: ${command.action} restarts the machine; reported on the next start`,
        {
          commandId: command.id,
        },
      );
      return true;
    }
    this.outputs.put(command.id, result.output);
    const entry = this.record(command, {
      outcome: 'finished',
      status: result.status,
      exitCode: result.exitCode,
      ...(result.reason ? { reason: result.reason } : {}),
    });
    return this.reportRecorded(command, entry, client, context.signal);
  }

  /** Reports what the journal says of the command, again if need be. */
  private async reportRecorded(
    command: AgentCommand,
    entry: JournalEntry,
    client: AgentClient,
    signal: AbortSignal,
  ): Promise<boolean> {
    const report = this.reportOf(command, entry);
    const sent = await this.reported(command, () =>
      report === null
        ? client.refuse(command.id, entry.reason ?? 'refused', signal)
        : client.result(command.id, report, signal),
    );
    if (sent) {
      this.outputs.drop(command.id);
      const said = report?.status ?? 'refused';
      const why = report === null ? entry.reason : report.reason;
      this.log('info', `command ${command.id} (${command.action}) ${said}${why ? `: ${why}` : ''}`, {
        commandId: command.id,
        outcome: said,
      });
    }
    return true;
  }

  /** The result to report for a journaled step; null for a refusal. */
  private reportOf(command: AgentCommand, entry: JournalEntry): RunReport | null {
    switch (entry.outcome) {
      case 'refused':
        return null;
      case 'finished':
        return {
          status: entry.status ?? 'failed',
          exitCode: entry.exitCode ?? null,
          ...(entry.reason ? { reason: entry.reason } : {}),
          ...(this.outputs.get(command.id) ?? NO_OUTPUT),
        };
      case 'started':
      case 'acked':
        return {
          status: 'returned',
          exitCode: null,
          reason: entry.restarts
            ? `the machine restarted (${command.action})`
            : `the agent started again while ${command.action} ran; it is not run again`,
          ...NO_OUTPUT,
        };
    }
  }

  /**
   * Sends one report; false when the command is final or gone there (cancelled, expired, reported
   * before: nothing to retry). A failure to get through throws: the command comes back on the next
   * poll and the report goes again.
   */
  private async reported(command: AgentCommand, send: () => Promise<void>): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (error) {
      if (error instanceof ApiError && [400, 404, 409].includes(error.status)) {
        this.outputs.drop(command.id);
        this.log('warn', `command ${command.id} (${command.action}): ${error.message}`, {
          commandId: command.id,
        });
        return false;
      }
      throw error;
    }
  }

  private record(
    command: AgentCommand,
    step: Omit<JournalEntry, 'id' | 'kind' | 'at' | 'action'>,
  ): JournalEntry {
    const entry: JournalEntry = {
      id: command.id,
      kind: command.kind,
      ...(command.action ? { action: command.action } : {}),
      ...step,
      // As the API takes a reason: one line, at most its length.
      ...(step.reason === undefined ? {} : { reason: freeText(step.reason, MAX_REASON, 'refused') }),
      at: new Date().toISOString(),
    };
    this.journal.append(entry);
    return entry;
  }
}
